import Foundation

/// How many Apple calls a verifier keeps in flight: what it is configured
/// for (`STOREKEEPER_VERIFIER_MAX_IN_FLIGHT`), but never more than its
/// open-file limit can hold connections for. Over HTTP/1.1 every call in
/// flight holds a connection of its own; past the limit, sockets cannot be
/// opened and the calls fail as connection errors, retried until the
/// deadline. A
/// bound the limit can hold pushes back instead (`overloaded`), which a
/// gateway hands to another verifier.
enum CallsInFlightBound {
    /// Descriptors kept for everything else a verifier opens: its ZeroMQ
    /// sockets and libzmq's own, curl's epoll and wake-up, the metrics
    /// endpoint's connections, log and certificate files.
    static let reservedDescriptors = 256

    /// - Parameter openFileLimit: the soft limit, after the service raised it
    ///   (`OpenFileLimit.raiseForConnections`); nil when it could not be read.
    /// - Returns: the bound, and whether the limit lowered the configured one.
    static func effective(configured: Int, openFileLimit: rlim_t?) -> (bound: Int, lowered: Bool) {
        guard let openFileLimit else { return (configured, false) }
        let holdable = max(1, Int(clamping: openFileLimit) - reservedDescriptors)
        return configured > holdable ? (holdable, true) : (configured, false)
    }
}
