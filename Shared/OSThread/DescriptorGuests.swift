/// The guests a `DescriptorHost` serves, kept by the host's thread alone: a
/// guest is serviced in the turn one of its descriptors is readable, or its
/// time has come. A host has a few (a verifier one per pool it works for),
/// so a list is searched. The host says how it watches a descriptor (its
/// epoll set) and stops watching it.
public struct DescriptorGuests {
    private struct Entry {
        let guest: any DescriptorGuest
        let descriptors: [Int32]
        var ready: Bool
        var deadline: ContinuousClock.Instant?
    }

    private var entries: [Entry] = []

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }

    /// A guest is to be serviced whatever the wait reports (just attached):
    /// the host should not block.
    public var hasReady: Bool {
        for entry in entries where entry.ready { return true }
        return false
    }

    /// The earliest time a guest asked to be serviced by, readiness aside. (Plain
    /// loops here: the host asks both every turn; see `MultiLoop.waitMilliseconds`.)
    public var earliestDeadline: ContinuousClock.Instant? {
        var earliest: ContinuousClock.Instant?
        for entry in entries {
            guard let deadline = entry.deadline else { continue }
            if let current = earliest, current <= deadline { continue }
            earliest = deadline
        }
        return earliest
    }

    /// Attaches `guests` and watches their descriptors; each is serviced in
    /// the next `service`, since its descriptors may have signalled before
    /// they were watched.
    public mutating func attach(_ guests: [any DescriptorGuest], watch: (Int32) -> Void) {
        for guest in guests {
            guard let descriptors = guest.attach() else { continue }
            descriptors.forEach(watch)
            entries.append(Entry(guest: guest, descriptors: descriptors, ready: true, deadline: nil))
        }
    }

    /// `descriptor` is readable.
    public mutating func markReady(_ descriptor: Int32) {
        guard let index = entries.firstIndex(where: { $0.descriptors.contains(descriptor) }) else { return }
        entries[index].ready = true
    }

    /// Services every guest that is ready or due; a guest that is done is
    /// unwatched, then detached.
    public mutating func service(now: ContinuousClock.Instant, unwatch: (Int32) -> Void) {
        var index = 0
        while index < entries.count {
            let entry = entries[index]
            guard entry.ready || entry.deadline.map({ $0 <= now }) == true else {
                index += 1
                continue
            }
            switch entry.guest.service() {
            case .wait(let milliseconds):
                entries[index].ready = false
                entries[index].deadline = milliseconds.map { now + .milliseconds($0) }
                index += 1
            case .done:
                entries.remove(at: index)
                entry.descriptors.forEach(unwatch)
                entry.guest.detach(hostStopping: false)
            }
        }
    }

    /// The host stops: every guest is unwatched and detached.
    public mutating func detachAll(unwatch: (Int32) -> Void) {
        for entry in entries {
            entry.descriptors.forEach(unwatch)
            entry.guest.detach(hostStopping: true)
        }
        entries = []
    }
}
