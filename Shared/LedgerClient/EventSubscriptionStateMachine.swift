import Contracts

/// The subscriber's side of the ledger's event stream (the ZeroMQ guide's
/// Clone pattern), without sockets or clocks: it catches up through replay,
/// then follows live events, skipping what it has seen and going back to
/// replay on a jump in seq or a quiet spell. `LedgerEventSubscriber` feeds it
/// what the sockets say and does what the returned steps say.
struct EventSubscriptionStateMachine {
    /// What the subscriber does next.
    enum Next: Equatable {
        /// Ask replay for the events after `afterSeq`.
        case replay(afterSeq: UInt64)
        /// Replay did not answer (the ledger is restarting): ask again after `delay`.
        case replayAgain(afterSeq: UInt64, delay: Duration)
        /// Wait for a live event (at most the idle check, then `idle()`).
        case awaitLive
        /// Retention removed events not yet delivered: resynchronize from state.
        case fail(LedgerEventSubscriber.EventsLost)
    }

    /// Deliver `deliver` (in order, each once), then do `next`.
    struct Step: Equatable {
        var deliver: [LedgerEvent] = []
        var next: Next
    }

    /// How long to wait before asking replay again after it did not answer.
    static let replayRetryDelay: Duration = .milliseconds(200)

    /// The seq of the last event delivered (or the one the subscriber started after).
    private(set) var last: UInt64
    /// A live event that came after a gap, held while replay fills the gap.
    private var held: LedgerEvent?

    init(after seq: UInt64) { last = seq }

    /// The first step: catch up from `last`.
    func start() -> Step { Step(next: .replay(afterSeq: last)) }

    /// A batch from replay: what follows `last` is delivered; a batch that
    /// starts past `last + 1` means retention removed events in between.
    mutating func replayed(_ batch: ReplayBatch) -> Step {
        guard batch.oldestRetainedSeq <= last + 1 else {
            held = nil
            return Step(next: .fail(.init(afterSeq: last, oldestRetainedSeq: batch.oldestRetainedSeq)))
        }
        var step = Step(next: .awaitLive)
        for event in batch.events where event.seq == last + 1 {
            step.deliver.append(event)
            last = event.seq
        }
        if batch.more {
            step.next = .replay(afterSeq: last)
            return step
        }
        // Caught up: the live event that showed the gap, unless replay already brought it.
        if let event = held.take(), event.seq == last + 1 {
            step.deliver.append(event)
            last = event.seq
        }
        return step
    }

    /// Replay gave no answer in time, or a retryable refusal (stopping, at capacity).
    func replayUnanswered() -> Step {
        Step(next: .replayAgain(afterSeq: last, delay: Self.replayRetryDelay))
    }

    /// A live event: the next one is delivered, one seen before is skipped,
    /// and one past the next means events were dropped (a PUB socket drops for
    /// slow subscribers): replay fills the gap first.
    mutating func live(_ event: LedgerEvent) -> Step {
        if event.seq <= last { return Step(next: .awaitLive) }
        if event.seq == last + 1 {
            last = event.seq
            return Step(deliver: [event], next: .awaitLive)
        }
        held = event
        return Step(next: .replay(afterSeq: last))
    }

    /// No live event for the idle check: ask replay whether something was missed.
    func idle() -> Step { Step(next: .replay(afterSeq: last)) }
}
