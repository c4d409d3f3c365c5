import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The curl loop's readiness set: an epoll(7) instance holding curl's sockets
/// and one eventfd(2) that other threads write to wake the loop (the
/// `curl_multi_socket_action` interface has no `curl_multi_wakeup`).
/// Level-triggered, so an event curl does not fully drain shows up again.
///
/// Used from the loop thread only, except `Epoll.wake(_:)`. Linux only, like
/// the deployment; another platform would need a kqueue twin of this file.
final class Epoll {
    private let descriptor: Int32
    /// Written by `Epoll.wake(_:)`; readable until the loop drains it.
    let wakeDescriptor: Int32
    private var events: [epoll_event]
    /// Which tag registered each descriptor, plus one (0: none), indexed by
    /// descriptor. A socket curl closed without `CURL_POLL_REMOVE` can come
    /// back under the same number in another multi handle; the first
    /// handle's late REMOVE must not unwatch it there.
    private var owners: [UInt32] = []

    init?(maxEventsPerWait: Int = 1_024) {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeDescriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        events = Array(repeating: epoll_event(), count: maxEventsPerWait)
        guard descriptor >= 0, wakeDescriptor >= 0, watch(wakeDescriptor, readable: true, writable: false, isNew: true)
        else {
            release()
            return nil
        }
    }

    /// Adds `socket` (`isNew`) or changes what it is watched for; `wait`
    /// reports it with `tag` (which multi handle owns it). Falls back to the
    /// other operation when the kernel disagrees about whether it is
    /// registered: curl may close a socket without a `CURL_POLL_REMOVE`, and
    /// a new socket can reuse the number.
    @discardableResult
    func watch(_ socket: Int32, tag: UInt32 = 0, readable: Bool, writable: Bool, isNew: Bool) -> Bool {
        var event = epoll_event()
        event.events = (readable ? EPOLLIN.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0)
        event.data.u64 = UInt64(tag) << 32 | UInt64(UInt32(bitPattern: socket))
        let (first, second) = isNew ? (EPOLL_CTL_ADD, EPOLL_CTL_MOD) : (EPOLL_CTL_MOD, EPOLL_CTL_ADD)
        let watched =
            epoll_ctl(descriptor, first, socket, &event) == 0 || epoll_ctl(descriptor, second, socket, &event) == 0
        if watched, socket >= 0 {
            if owners.count <= Int(socket) { owners += Array(repeating: 0, count: Int(socket) + 1 - owners.count) }
            owners[Int(socket)] = tag + 1
        }
        return watched
    }

    /// Stops watching `socket`, unless another tag has registered it since.
    func unwatch(_ socket: Int32, tag: UInt32 = 0) {
        guard socket >= 0, Int(socket) < owners.count, owners[Int(socket)] == tag + 1 else { return }
        owners[Int(socket)] = 0
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, socket, nil)
    }

    /// Waits up to `timeoutMilliseconds` (nil: until a socket or a wake-up is
    /// ready) and calls `body` with each ready socket, its tag and its curl
    /// `CURL_CSELECT_*` flags. Drains a wake-up instead of reporting it.
    /// Returns `false` when epoll fails.
    func wait(timeoutMilliseconds: Int32?, _ body: (_ socket: Int32, _ tag: UInt32, _ flags: Int32) -> Void) -> Bool {
        let count = epoll_wait(descriptor, &events, Int32(events.count), timeoutMilliseconds.map { max(0, $0) } ?? -1)
        guard count >= 0 else { return errno == EINTR }
        for index in 0..<Int(count) {
            let (data, ready) = (events[index].data.u64, events[index].events)
            let (socket, tag) = (Int32(bitPattern: UInt32(truncatingIfNeeded: data)), UInt32(data >> 32))
            if socket == wakeDescriptor {
                var value: UInt64 = 0
                _ = read(wakeDescriptor, &value, MemoryLayout<UInt64>.size)
                continue
            }
            var flags: Int32 = 0
            if ready & EPOLLIN.rawValue != 0 { flags |= CURL_CSELECT_IN }
            if ready & EPOLLOUT.rawValue != 0 { flags |= CURL_CSELECT_OUT }
            if ready & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { flags |= CURL_CSELECT_ERR }
            body(socket, tag, flags)
        }
        return true
    }

    /// Wakes the loop from any thread. The caller guarantees the descriptor
    /// is still open (`SharedState` calls this under its lock, and the loop
    /// detaches before `release`).
    static func wake(_ wakeDescriptor: Int32) {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// Closes both descriptors.
    func release() {
        if descriptor >= 0 { _ = close(descriptor) }
        if wakeDescriptor >= 0 { _ = close(wakeDescriptor) }
    }
}
