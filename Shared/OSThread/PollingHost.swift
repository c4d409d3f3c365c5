import Synchronization
import Timekeeping

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A `DescriptorHost` for a thread of our own that would otherwise sleep on
/// a semaphore between jobs (the SQLite ledger's writer): it sleeps in
/// `poll(2)` instead, on a pipe that `wake()` writes to and on its guests'
/// descriptors, and serves the guests between its jobs. The guests' messages
/// then reach the thread that handles them without a thread of their own
/// in between.
///
/// `adopt` and `wake` are for any thread; `serve` and `stop` for the owning
/// thread only, which alone touches the guests: that is the
/// `@unchecked Sendable`. Linux only, like the deployment.
public final class PollingHost: DescriptorHost, @unchecked Sendable {
    private struct Adoptions {
        var waiting: [any DescriptorGuest] = []
        var stopped = false
    }

    /// A self-pipe, both ends non-blocking and close-on-exec (Glibc's module has no eventfd).
    private let wakeDescriptor: Int32
    private let wakeWriteEnd: Int32
    private let adoptions = Mutex(Adoptions())
    private var guests = DescriptorGuests()

    /// `nil` when the kernel gives no pipe.
    public init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        (wakeDescriptor, wakeWriteEnd) = (ends[0], ends[1])
    }

    deinit {
        close(wakeDescriptor)
        close(wakeWriteEnd)
    }

    public func adopt(_ guest: any DescriptorGuest) -> Bool {
        let adopted = adoptions.withLock { state in
            guard !state.stopped else { return false }
            state.waiting.append(guest)
            return true
        }
        if adopted { wake() }
        return adopted
    }

    /// Ends the owner's current or next wait in `serve`. Never blocks.
    public func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWriteEnd, &byte, 1)
    }

    /// On the owning thread: attaches the guests adopted since the last call,
    /// waits for a `wake()` or a guest's descriptor (up to
    /// `maxMilliseconds`, nil for as long as it takes; less when a guest
    /// asked for a time, not at all when one is ready), then services the
    /// guests that are ready or due.
    public func serve(waitingUpTo maxMilliseconds: Int?) {
        guests.attach(adoptions.withLock { state in
            defer { state.waiting = [] }
            return state.waiting
        }) { _ in }
        var pollSet = [pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        pollSet += guests.descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&pollSet, nfds_t(pollSet.count), waitMilliseconds(cap: maxMilliseconds))
        if ready > 0 {
            if pollSet[0].revents != 0 {
                var drained = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
                let size = MemoryLayout.size(ofValue: drained)
                while withUnsafeMutableBytes(of: &drained, { read(wakeDescriptor, $0.baseAddress, size) }) == size {}
            }
            for entry in pollSet.dropFirst() where entry.revents != 0 { guests.markReady(entry.fd) }
        }
        guests.service(now: .now) { _ in }
    }

    /// On the owning thread, as it ends: later adoptions are refused, and
    /// every guest is detached (one never attached runs on its own).
    public func stop() {
        let waiting = adoptions.withLock { state in
            state.stopped = true
            defer { state.waiting = [] }
            return state.waiting
        }
        guests.detachAll { _ in }
        for guest in waiting { guest.detach(hostStopping: true) }
    }

    /// poll(2)'s time-out: -1 for none.
    private func waitMilliseconds(cap: Int?) -> Int32 {
        if guests.hasReady { return 0 }
        var wait = cap.map(Int64.init)
        if let deadline = guests.earliestDeadline {
            let left = max(0, (deadline - .now).millisecondsRoundedUp)
            wait = min(wait ?? left, left)
        }
        return wait.map { Int32(clamping: $0) } ?? -1
    }
}
