/// A thread of our own that waits on descriptors (the curl loop's epoll) and
/// lets other loops share its wait instead of each blocking a thread of its
/// own: a ZeroMQ socket whose messages that thread mostly handles anyway.
/// Every message then wakes one thread, not a loop's thread that wakes the
/// host's.
///
/// The host calls a guest only on its own thread, one call at a time.
public protocol DescriptorHost: Sendable {
    /// Takes `guest` on: the host's thread calls `attach()`, then `service()`
    /// whenever one of its descriptors is readable or the time it asked for
    /// has come, until the guest is done. False, taking nothing on, once the
    /// host has stopped (or is stopping): the guest must run elsewhere.
    func adopt(_ guest: any DescriptorGuest) -> Bool
}

/// A loop run in the turns of a `DescriptorHost`'s thread.
public protocol DescriptorGuest: AnyObject, Sendable {
    /// On the host's thread, once, before anything else: sets up and returns
    /// the descriptors to watch for reading (level-triggered), or `nil` when
    /// the guest could not start (it has then finished by itself).
    func attach() -> [Int32]?

    /// On the host's thread: does what can be done without blocking.
    func service() -> DescriptorGuestTurn

    /// On the host's thread, after it stopped watching the descriptors: the
    /// guest closes them and ends. `hostStopping` when the host ends first;
    /// a guest it never attached is detached on whichever thread it ends on.
    func detach(hostStopping: Bool)
}

/// What a guest asks of its host after a turn.
public enum DescriptorGuestTurn: Equatable, Sendable {
    /// Turn again when a descriptor is readable, and after this many
    /// milliseconds at the latest when given.
    case wait(milliseconds: Int?)
    /// Done: stop watching, then `detach(hostStopping: false)`.
    case done
}
