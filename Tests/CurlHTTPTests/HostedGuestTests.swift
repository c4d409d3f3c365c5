import ZeroMQTestSupport
import CurlHTTP
import CurlHTTPTestSupport
import Foundation
import DescriptorHostTestSupport
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
