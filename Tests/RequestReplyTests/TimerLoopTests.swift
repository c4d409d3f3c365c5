import Synchronization
import TaskOutcome
import Testing

@testable import RequestReply

/// The doorbell and the timer loop on it: a wait with no deadline ends only
/// at a ring (kept when it comes first) or cancellation, and a loop with
/// nothing due takes no turn until woken. Every wait is bounded, and passing
/// never depends on the bound.
@Suite(.timeLimit(.minutes(1))) struct TimerLoopTests {
    /// The bound on a wait that must end: generous, for a loaded machine.
    static let patience: Duration = .seconds(30)

    @Test func aRingBeforeTheWaitIsKeptForIt() async {
        let bell = Doorbell()
        bell.ring()
        let waiting = Task<Void, any Error> { await bell.wait(until: nil) }
        #expect(await outcome(of: waiting, within: Self.patience) != nil)
    }

    @Test func aWaitWithoutDeadlineEndsAtARing() async {
        let bell = Doorbell()
        let waiting = Task<Void, any Error> { await bell.wait(until: nil) }
        bell.ring()
        #expect(await outcome(of: waiting, within: Self.patience) != nil)
    }

    @Test func aWaitEndsAtItsDeadlineOrAtOnceWhenCancelled() async {
        let bell = Doorbell()
        let timed = Task<Void, any Error> { await bell.wait(until: .now + .milliseconds(10)) }
        #expect(await outcome(of: timed, within: Self.patience) != nil)
        let cancelled = Task<Void, any Error> { await bell.wait(until: nil) }
        cancelled.cancel()
        #expect(await outcome(of: cancelled, within: Self.patience) != nil)
    }

    @Test func aLoopWithNothingDueTurnsOnlyWhenWokenAndAtWhatItSetsAnAlarmFor() async throws {
        let loop = TimerLoop()
        // Each turn sets the next alarm of the script (nil: sleep until woken), and counts itself.
        let script = Script([nil, .milliseconds(10), nil])
        let running = Task { try await loop.run(script.turn) }
        defer { running.cancel() }
        let turns = { script.turns }
        #expect(await eventually { turns() == 1 })
        // A window can only miss a wrong turn, never invent one.
        try await Task.sleep(for: .milliseconds(100))
        #expect(turns() == 1)
        // Asleep with no alarm: only a wake-up turns it; its next alarm, 10 ms later, turns it again.
        loop.wake()
        #expect(await eventually { turns() == 3 })
        loop.wake()
        #expect(await eventually { turns() == 4 })
        running.cancel()
        #expect(await outcome(of: running, within: Self.patience) != nil, "cancelled, it ends")
    }

    /// Waits until `condition` holds, looking every 5 ms, for at most `patience`.
    func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + Self.patience
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }
}

/// A timer loop's turns, played from a list of alarms (after the turn's time; nil: none).
private final class Script: Sendable {
    private let state: Mutex<(turns: Int, alarms: [Duration?])>

    init(_ alarms: [Duration?]) {
        state = Mutex((0, alarms))
    }

    var turns: Int { state.withLock { $0.turns } }

    func turn(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        state.withLock { state in
            state.turns += 1
            return state.alarms.isEmpty ? nil : state.alarms.removeFirst().map { now + $0 }
        }
    }
}
