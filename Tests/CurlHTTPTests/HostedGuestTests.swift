import ZeroMQTestSupport
import CurlHTTP
import CurlHTTPTestSupport
import Foundation
import OSThread
import Synchronization
import Testing

/// The client as a `DescriptorHost`: a guest is attached and served on the
/// curl loop's thread when its descriptor is readable or its time has come,
/// beside transfers; one that is done is detached and never served again;
/// when the client stops, the rest are detached and later ones refused.
@Suite(.timeLimit(.minutes(1))) struct HostedGuestTests {
    @Test func aGuestIsServedOnTheLoopsThreadWhenItsDescriptorIsReadableBesideTransfers() async throws {
        let guest = try PipeGuest()
        try await Harness.with { harness in
            #expect(harness.client.adopt(guest))
            // Served once as it is attached: its descriptor may have signalled before it was watched.
            #expect(await eventually { guest.services == 1 })
            for poke in 1...20 {
                guest.poke()
                try #require(await eventually { guest.services == 1 + poke })
            }
            let status = try await harness.get("/peer").status
            #expect(status == 200, "transfers go on beside the guest")
        }
        #expect(guest.threads == ["curl-loop"], "called on \(guest.threads)")
        #expect(guest.detachments == [true], "detached once, as the client stopped")
    }

    @Test func aGuestAskingForTimeIsServedByThenWithoutAnyDescriptorReadable() async throws {
        let guest = try PipeGuest()
        guest.answer { services in services < 5 ? .wait(milliseconds: 1) : .wait(milliseconds: nil) }
        try await withRunningClient { client, _ in
            #expect(client.adopt(guest))
            #expect(await eventually { guest.services == 5 })
        }
        #expect(guest.services == 5, "no time asked after the fifth: no sixth turn until a poke")
    }

    @Test func aGuestThatIsDoneIsDetachedAndNeverServedAgain() async throws {
        let guest = try PipeGuest()
        guest.answer { services in services < 2 ? .wait(milliseconds: nil) : .done }
        try await withRunningClient { client, _ in
            #expect(client.adopt(guest))
            #expect(await eventually { guest.services == 1 })
            guest.poke()
            #expect(await eventually { guest.detachments == [false] })
            let another = try PipeGuest()
            #expect(client.adopt(another))
            #expect(await eventually { another.services == 1 })
            guest.poke()  // unwatched: only the other guest's poke turns anything
            another.poke()
            #expect(await eventually { another.services == 2 })
        }
        #expect(guest.services == 2)
        #expect(guest.detachments == [false])
    }

    @Test func aGuestAdoptedBeforeTheLoopRunsIsAttachedOnceItDoesAndNoneAfterItStopped() async throws {
        let client = CurlHTTPClient(logger: .quiet)
        let early = try PipeGuest()
        #expect(client.adopt(early))
        let runner = Task { try await client.run() }
        #expect(await eventually { early.services == 1 })
        runner.cancel()
        try await runner.value
        #expect(early.detachments == [true])
        let late = try PipeGuest()
        #expect(!client.adopt(late), "a stopped loop takes no guest")
        #expect(late.services == 0 && late.detachments.isEmpty)
    }
}

/// A guest whose one descriptor is a pipe's read end, which the test writes
/// to; it counts its turns, notes the threads it was called on and answers
/// each turn as told (by default: wait for the pipe).
final class PipeGuest: DescriptorGuest, Sendable {
    private struct State {
        var services = 0
        var threads: Set<String> = []
        var detachments: [Bool] = []
        var answer: @Sendable (Int) -> DescriptorGuestTurn = { _ in .wait(milliseconds: nil) }
    }

    private let readEnd: Int32
    private let writeEnd: Int32
    private let state = Mutex(State())

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    var services: Int { state.withLock { $0.services } }
    var threads: Set<String> { state.withLock { $0.threads } }
    var detachments: [Bool] { state.withLock { $0.detachments } }

    /// How to answer the turn with this number (from 1).
    func answer(_ answer: @escaping @Sendable (Int) -> DescriptorGuestTurn) { state.withLock { $0.answer = answer } }

    func poke() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    func attach() -> [Int32]? {
        note()
        return [readEnd]
    }

    func service() -> DescriptorGuestTurn {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
        note()
        return state.withLock { state in
            state.services += 1
            return state.answer(state.services)
        }
    }

    func detach(hostStopping: Bool) {
        note()
        state.withLock { $0.detachments.append(hostStopping) }
    }

    private func note() {
        let name = ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        state.withLock { _ = $0.threads.insert(name) }
    }
}
