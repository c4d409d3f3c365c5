import DescriptorHostTestSupport
import OSThread
import Synchronization
import Testing
import ZeroMQTestSupport

/// `PollingHost` on a thread of the test's own: guests are attached and
/// served there when their descriptor is readable or their time has come,
/// `wake()` ends a wait without a time-out, a guest that is done is
/// detached, and `stop()` detaches the rest and refuses later ones.
@Suite(.timeLimit(.minutes(1))) struct PollingHostTests {
    /// Serves `host` on a thread named "test-host" (waiting without a
    /// time-out each time) until `body` returns, then stops it there.
    func withServing<T>(_ host: PollingHost, _ body: () async throws -> T) async throws -> T {
        let ending = Atomic<Bool>(false)
        let ended = Atomic<Bool>(false)
        #expect(OSThread.start(name: "test-host") {
            while !ending.load(ordering: .acquiring) { host.serve(waitingUpTo: nil) }
            host.stop()
            ended.store(true, ordering: .releasing)
        })
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        ending.store(true, ordering: .releasing)
        host.wake()
        try #require(await eventually { ended.load(ordering: .acquiring) }, "the host's thread ended")
        return try result.get()
    }

    @Test func aGuestIsServedOnTheOwnersThreadEachTimeItsDescriptorIsReadable() async throws {
        let host = try #require(PollingHost())
        let guest = try PipeGuest()
        try await withServing(host) {
            #expect(host.adopt(guest))
            try #require(await eventually { guest.services == 1 }, "served as attached")
            for poke in 1...10 {
                guest.poke()
                try #require(await eventually { guest.services == 1 + poke })
            }
        }
        #expect(guest.threads == ["test-host"])
        #expect(guest.detachments == [true], "detached as the host stopped")
    }

    @Test func aGuestAskingForTimeIsServedByThenAndOneThatIsDoneIsDetached() async throws {
        let host = try #require(PollingHost())
        let timed = try PipeGuest()
        timed.answer { services in services < 5 ? .wait(milliseconds: 1) : .done }
        try await withServing(host) {
            #expect(host.adopt(timed))
            #expect(await eventually { timed.detachments == [false] })
        }
        #expect(timed.services == 5, "its fifth turn said done: no sixth")
        #expect(timed.detachments == [false], "not detached again as the host stopped")
    }

    @Test func aStoppedHostRefusesGuestsAndDetachesOnesItNeverAttached() async throws {
        let host = try #require(PollingHost())
        let never = try PipeGuest()
        #expect(host.adopt(never), "adopted before anyone serves the host")
        host.stop()
        #expect(never.services == 0)
        #expect(never.detachments == [true])
        #expect(!host.adopt(try PipeGuest()))
    }
}
