import Logging
import Synchronization

/// Holds `/hang` requests until the test opens it, and lets the test wait
/// until a number of them have arrived: tests order events by these signals,
/// never by sleeping.
public final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var arrivals = 0
        /// The client ports the arrivals came from: one per connection.
        var peers: Set<Int> = []
        var held: [CheckedContinuation<Void, Never>] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Mutex(State())

    /// A request arrives (over the connection from `peer`): counts it, then waits until the gate opens.
    func pass(peer: Int? = nil) async {
        await withCheckedContinuation { continuation in
            let (release, arrived) = state.withLock { state in
                state.arrivals += 1
                if let peer { state.peers.insert(peer) }
                let count = state.arrivals
                let arrived = state.watchers.filter { $0.count <= count }.map(\.continuation)
                state.watchers.removeAll { $0.count <= count }
                if state.isOpen { return (true, arrived) }
                state.held.append(continuation)
                return (false, arrived)
            }
            arrived.forEach { $0.resume() }
            if release { continuation.resume() }
        }
    }

    /// Returns once `count` requests have arrived in total.
    public func waitForArrivals(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.arrivals >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Connections the arrivals came over so far.
    public var connectionCount: Int { state.withLock { $0.peers.count } }

    /// Requests that have arrived so far.
    public var arrivalCount: Int { state.withLock { $0.arrivals } }

    /// Releases every held request and lets later ones through.
    public func open() {
        let held = state.withLock { state in
            state.isOpen = true
            defer { state.held = [] }
            return state.held
        }
        held.forEach { $0.resume() }
    }
}

public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension Logger {
    /// Drops everything: the servers and clients of tests that do not look at logs.
    public static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
}

/// Keeps every log record in memory, so a test can read what the client logged
/// without bootstrapping the process-wide logging system.
public final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var logger: Logger {
        var logger = Logger(label: "curl-test", factory: { _ in Handler(recorder: self) })
        logger.logLevel = .trace
        return logger
    }

    public var records: [String] { lines.withLock { $0 } }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.append("\(event.level) \(event.message) \(merged)")
        }
    }
}
