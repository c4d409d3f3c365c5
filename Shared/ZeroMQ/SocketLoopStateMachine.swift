import DequeModule

/// Why a `send` or `receive` of a socket loop did not complete.
enum SocketLoopFailure: Equatable {
    /// The loop stopped (or was asked to), or ran before: nothing more goes through it.
    case closed
    /// The caller's task was cancelled while its message was still ours to withdraw.
    case cancelled
}

/// What async callers and a `ZMQSocketLoop`'s thread share, as a value that
/// takes events and returns what to do: no libzmq, no lock (the loop keeps it
/// in a `Mutex`), no real continuations (`SendWaiter` and `ReceiveWaiter` are
/// generic so tests drive it with plain values), so each race has a test.
///
/// Every waiter sits in exactly one place (the outbox, the message the thread
/// is sending, the waiting receivers) until the party that takes it out resumes it: that
/// is what makes each continuation resume exactly once.
struct SocketLoopStateMachine<SendWaiter, ReceiveWaiter> {
    typealias Message = [[UInt8]]

    enum Phase: Equatable { case notStarted, running, stopped }

    struct OutgoingMessage {
        let id: UInt64
        let frames: Message
        let waiter: SendWaiter
    }

    /// What the thread does in one turn, read at its start.
    struct Turn: Equatable {
        var stop: Bool
        var hasOutgoing: Bool
        var inboxHasRoom: Bool
    }

    /// Waiters left when the loop stopped: they fail with `.closed`.
    struct Leftovers {
        var sends: [SendWaiter] = []
        var receives: [ReceiveWaiter] = []
        /// Messages taken from libzmq that no one received.
        var discardedMessages = 0
    }

    let inboxLimit: Int
    private(set) var phase = Phase.notStarted
    private(set) var stopRequested = false
    private var outbox = Deque<OutgoingMessage>()
    private var inbox = Deque<Message>()
    private var receivers = Deque<(id: UInt64, waiter: ReceiveWaiter)>()
    private var nextID: UInt64 = 0
    /// No wake-up is needed: one was written and the thread has not begun a
    /// turn since, or the thread has found work and begins another
    /// turn (which sees every change) before it can block again. Another
    /// would be a wasted syscall and a spurious turn.
    private var wakePending = false

    init(inboxLimit: Int) {
        precondition(inboxLimit >= 1, "a socket loop's inbox must hold at least one message")
        self.inboxLimit = inboxLimit
    }

    var queuedSendCount: Int { outbox.count }
    var waitingReceiverCount: Int { receivers.count }
    var bufferedMessageCount: Int { inbox.count }
    var inboxIsFull: Bool { inbox.count >= inboxLimit }

    mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    // MARK: Lifecycle

    /// `run()` began. False when the loop ran before: a loop runs once.
    mutating func start() -> Bool {
        guard phase == .notStarted else { return false }
        phase = .running
        return true
    }

    /// Cancellation of `run()` or `stop()`. Returns whether to wake the thread.
    mutating func requestStop() -> Bool {
        guard !stopRequested else { return false }
        stopRequested = true
        return wakeIfRunning()
    }

    /// The thread begins a turn. Any wake-up written from now on is for
    /// changes this snapshot may not show, so it is not suppressed.
    mutating func beginTurn() -> Turn {
        wakePending = false
        return Turn(stop: stopRequested, hasOutgoing: !outbox.isEmpty, inboxHasRoom: inbox.count < inboxLimit)
    }

    /// The thread found work this turn: until its next turn, which it begins
    /// before it can wait again, changes need no wake-up.
    mutating func willTurnAgain() {
        wakePending = true
    }

    /// The thread is done (stopped, failed, or the context was shut down).
    mutating func finish() -> Leftovers {
        phase = .stopped
        var leftovers = Leftovers(discardedMessages: inbox.count)
        leftovers.sends = outbox.map(\.waiter)
        leftovers.receives = receivers.map(\.waiter)
        outbox.removeAll()
        inbox.removeAll()
        receivers.removeAll()
        return leftovers
    }

    // MARK: Sending

    enum SendAction {
        case none
        case wake
        case fail(SendWaiter, SocketLoopFailure)
    }

    /// `send` hands over a message. Before `run()` it just waits in the outbox.
    mutating func enqueueSend(id: UInt64, frames: Message, waiter: SendWaiter, isCancelled: Bool) -> SendAction {
        if phase == .stopped || stopRequested { return .fail(waiter, .closed) }
        if isCancelled { return .fail(waiter, .cancelled) }
        outbox.append(OutgoingMessage(id: id, frames: frames, waiter: waiter))
        return wakeIfRunning() ? .wake : .none
    }

    /// Whether a `send` may hand its message to libzmq itself, now: the loop
    /// runs and nothing queued is older (order is kept).
    var acceptsDirectSend: Bool {
        phase == .running && !stopRequested && outbox.isEmpty
    }

    /// A `send` called libzmq itself, which may have taken the socket's
    /// signal, and the thread might then sleep through what it announced.
    /// Returns whether to wake the thread: after a successful send, only for
    /// a message waiting (`readable`) that the thread may take; after a send
    /// that failed or would block, always (even a shutdown's signal can be
    /// taken that way).
    mutating func calledSocketDirectly(sent: Bool, readable: Bool) -> Bool {
        if sent && !(readable && inbox.count < inboxLimit) { return false }
        return wakeIfRunning()
    }

    /// The sender's task was cancelled. Returns its waiter when the message
    /// is still in the outbox (it is withdrawn, never sent). The thread takes
    /// a message and hands it to libzmq in one hold of the lock, so a message
    /// not in the outbox has been sent.
    mutating func cancelSend(id: UInt64) -> SendWaiter? {
        guard let index = outbox.firstIndex(where: { $0.id == id }) else { return nil }
        return outbox.remove(at: index).waiter
    }

    /// The thread takes the oldest message to hand to libzmq.
    mutating func takeNextSend() -> OutgoingMessage? {
        outbox.popFirst()
    }

    /// libzmq would block: the message goes back to the head of the outbox (order is kept).
    mutating func sendWouldBlock(_ message: OutgoingMessage) {
        outbox.prepend(message)
    }

    // MARK: Receiving

    /// The thread took a message from libzmq: it goes to the longest-waiting
    /// receiver (returned, to resume with it), or into the inbox.
    mutating func deliver(_ message: Message) -> ReceiveWaiter? {
        if let receiver = receivers.popFirst() { return receiver.waiter }
        inbox.append(message)
        return nil
    }

    enum ReceiveAction {
        case wait
        /// Resume the waiter with the message; `wake` when the inbox was full
        /// (the thread stopped reading) and now has room.
        case resume(ReceiveWaiter, Message, wake: Bool)
        case fail(ReceiveWaiter, SocketLoopFailure)
    }

    mutating func receive(id: UInt64, waiter: ReceiveWaiter, isCancelled: Bool) -> ReceiveAction {
        if phase == .stopped { return .fail(waiter, .closed) }
        if let (message, wake) = takeBuffered() { return .resume(waiter, message, wake: wake) }
        if isCancelled { return .fail(waiter, .cancelled) }
        receivers.append((id, waiter))
        return .wait
    }

    /// The oldest message in the inbox, for a `receive` that need not wait;
    /// `wake` when the inbox was full (the thread stopped reading) and now has room.
    mutating func takeBuffered() -> (message: Message, wake: Bool)? {
        guard phase != .stopped, let message = inbox.popFirst() else { return nil }
        let wasFull = inbox.count + 1 >= inboxLimit
        return (message, wasFull && wakeIfRunning())
    }

    /// The receiver's task was cancelled: its waiter, if it still waits. A
    /// message delivered to it before that stays delivered (nothing is lost).
    mutating func cancelReceive(id: UInt64) -> ReceiveWaiter? {
        guard let index = receivers.firstIndex(where: { $0.id == id }) else { return nil }
        return receivers.remove(at: index).waiter
    }

    private mutating func wakeIfRunning() -> Bool {
        guard phase == .running, !wakePending else { return false }
        wakePending = true
        return true
    }
}

/// The thread gives a message back to the state across the lock.
extension SocketLoopStateMachine.OutgoingMessage: Sendable where SendWaiter: Sendable {}
