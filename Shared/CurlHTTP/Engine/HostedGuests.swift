import OSThread

/// The loops a curl loop serves in its turns beside its transfers
/// (`CurlHTTPClient.adopt`): their descriptors sit in the loop's epoll set
/// under a tag of their own, and a guest is serviced in the turn one of them
/// is readable, or its time has come. A verifier has one per pool it
/// works for, so a list is searched.
struct HostedGuests {
    /// The epoll tag of guests' descriptors (shards use their index).
    static let tag = UInt32.max - 1

    private struct Entry {
        let guest: any DescriptorGuest
        let descriptors: [Int32]
        var ready: Bool
        var deadline: ContinuousClock.Instant?
    }

    private var entries: [Entry] = []

    var isEmpty: Bool { entries.isEmpty }

    /// A guest is to be serviced whatever the wait reports (just attached).
    var hasReady: Bool { entries.contains(where: \.ready) }

    /// The earliest time a guest asked to be serviced by, readiness aside.
    var earliestDeadline: ContinuousClock.Instant? { entries.lazy.compactMap(\.deadline).min() }

    /// Attaches `guests` and watches their descriptors; each is serviced in
    /// this turn, since its descriptors may have signalled before they were watched.
    mutating func attach(_ guests: [any DescriptorGuest], to epoll: Epoll) {
        for guest in guests {
            guard let descriptors = guest.attach() else { continue }
            for descriptor in descriptors {
                epoll.watch(descriptor, tag: Self.tag, readable: true, writable: false, isNew: true)
            }
            entries.append(Entry(guest: guest, descriptors: descriptors, ready: true, deadline: nil))
        }
    }

    /// `descriptor`, reported under `tag`, is readable.
    mutating func markReady(_ descriptor: Int32) {
        guard let index = entries.firstIndex(where: { $0.descriptors.contains(descriptor) }) else { return }
        entries[index].ready = true
    }

    /// Services every guest that is ready or due; a guest that is done is
    /// unwatched, then detached.
    mutating func service(now: ContinuousClock.Instant, epoll: Epoll) {
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
                unwatch(entry, epoll: epoll)
                entry.guest.detach(hostStopping: false)
            }
        }
    }

    /// The host stops: every guest is unwatched and detached.
    mutating func detachAll(epoll: Epoll) {
        for entry in entries {
            unwatch(entry, epoll: epoll)
            entry.guest.detach(hostStopping: true)
        }
        entries = []
    }

    private func unwatch(_ entry: Entry, epoll: Epoll) {
        for descriptor in entry.descriptors { epoll.unwatch(descriptor, tag: Self.tag) }
    }
}
