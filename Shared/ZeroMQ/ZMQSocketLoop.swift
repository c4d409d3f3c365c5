import Foundation
import Logging
import OSThread
import Synchronization

/// One ZeroMQ socket on a thread of its own, used from async code.
///
/// ## Threading model
///
/// libzmq sockets are not thread-safe and their blocking calls must not run
/// on Swift's cooperative pool (two threads on a 2-core machine: one blocked
/// call would stall half the process). So `run()` starts one dedicated
/// thread, which creates the socket, runs `configure` on it (bind or connect,
/// options), and then loops: it waits in `poll` on the socket's signal
/// descriptor (`ZMQ_FD`) and on the read end of a self-pipe, moves messages
/// between libzmq and two queues, and at the end closes the socket on that
/// same thread. The wait has no time-out (only a send blocked on an
/// unreliable `ZMQ_POLLOUT` retries on a timer): every reason to turn signals
/// one of the two descriptors, so an idle socket's thread never wakes.
///
/// Async callers meet the thread in a state machine
/// (`SocketLoopStateMachine`) behind a `Mutex`, and every libzmq call on the
/// socket, by anyone, is made holding that lock: that is the full memory
/// barrier libzmq asks for when a socket is used from more than one thread,
/// and the thread never holds it while it waits. So `send` hands its message
/// to libzmq itself when nothing older is queued: no thread hop and no
/// suspension (in the stack benchmark, the ledger's CPU per request fell by
/// about a third). Otherwise (the
/// loop is not running yet, older messages wait, libzmq would block) it puts
/// the message in the outbox, writes a byte to the pipe to wake the thread,
/// and suspends. `receive` takes a message from the inbox, or waits for the
/// thread to hand it one (or, with `handleEachMessage`, the thread hands
/// every message to a handler instead). Each waiting call suspends on a
/// checked continuation that exactly one party resumes.
///
/// A loop given a `host` (a `DescriptorHost`, the verifier's curl loop) has
/// no thread of its own: the host's thread waits on `ZMQ_FD` and the pipe
/// beside its own descriptors and runs the same turns (`HostedSocketLoop`).
///
/// `ZMQ_FD` only says that the socket's events may have changed, and any call
/// on the socket may take that signal. The thread therefore reads
/// `ZMQ_EVENTS` before each wait and does not wait when there is work, and a
/// direct `send` wakes the thread whenever its call may have taken a signal
/// the thread needs (a message waiting, or any failure).
///
/// ## Back-pressure, both ways
///
/// - `send` resumes once libzmq has accepted the message. When the socket
///   would block (high-water mark, or no peer yet), the message stays in the
///   outbox until `ZMQ_EVENTS` reports the socket writable, and its sender stays
///   suspended: nothing is dropped, and the outbox never holds more messages
///   than there are suspended senders, which is why it needs no limit of its
///   own. (ROUTER and PUB drop at the high-water mark inside libzmq, as ever.
///   A ROUTER with `setRouterMandatory(true)` waits instead, which holds up
///   its later messages to other peers too, and fails messages to unknown
///   peers with `EHOSTUNREACH`.)
/// - Received messages wait in an inbox of at most `inboxLimit`. While it is
///   full the thread stops reading, so libzmq's queues fill and its
///   high-water marks push back on the peers.
///
/// ## Lifecycle
///
/// `run()` returns once the thread has closed the socket (with its linger).
/// Cancelling the task that runs it, calling `stop()`, or shutting the
/// context down stops the loop; a failing `configure` or socket call ends
/// `run()` with that error. Sends made before `run()` wait and go out once it
/// runs. Once stopped, waiting and later calls throw `Closed`; messages still
/// in the inbox are discarded. A loop runs once. Wrapped in a
/// swift-service-lifecycle `Service`, it is the `run()` of the service.
///
/// ```swift
/// let loop = ZMQSocketLoop(context: context, type: .dealer) { socket in
///     try socket.setRoutingID(Array("gateway-1".utf8))
///     try socket.connect("tcp://127.0.0.1:5555")
/// }
/// // in a task group or ServiceGroup: try await loop.run()
/// try await loop.send([Array("hello".utf8)])
/// let reply = try await loop.receive()
/// ```
public final class ZMQSocketLoop: Sendable {
    /// Thrown by `send`, `receive` and a second `run()` once the loop has stopped (or was asked to).
    public struct Closed: Error, Equatable, CustomStringConvertible {
        public init() {}
        public var description: String { "ZeroMQ socket loop closed" }
    }

    typealias Machine = SocketLoopStateMachine<SendCompletion, CheckedContinuation<[[UInt8]], any Error>>

    /// The state machine plus what the thread's start and end need.
    struct Locked {
        var machine: Machine
        /// Set while the thread runs; writing to it with the lock held is one non-blocking write.
        var wakeup: WakeupPipe?
        var finished: CheckedContinuation<Void, any Error>?
        /// The socket while the thread serves it: touched only with the lock held.
        var socket: LockedSocket?
        /// Set before `run()`: takes every message on the thread instead of `receive`.
        var messageHandler: MessageHandler?

        func wake() { wakeup?.wake() }
    }

    /// Called on the socket's thread with each message received; see `handleEachMessage`.
    public typealias MessageHandler = @Sendable ([[UInt8]]) -> Void

    public let type: ZMQSocketType
    let context: ZMQContext
    let configure: @Sendable (ZMQSocket) throws -> Void
    /// Serves the socket in its turns instead of a thread of the loop's own; nil for a thread.
    let host: (any DescriptorHost)?
    let logger: Logger
    let locked: Mutex<Locked>

    /// Nothing starts here: the thread and the socket come with `run()`.
    ///
    /// - Parameters:
    ///   - inboxLimit: received messages held for `receive` before the thread
    ///     stops reading the socket.
    ///   - host: another loop's thread to serve the socket on (see
    ///     `HostedSocketLoop`), for a socket whose messages that thread handles
    ///     anyway: one thread wakes per message instead of two. When it has
    ///     stopped, or stops before it took the socket on, the loop starts a
    ///     thread of its own after all.
    ///   - logger: debug lines for start, stop and failure.
    ///   - configure: runs on the socket's thread before anything else: bind
    ///     or connect, set options. What it throws ends `run()`.
    public init(
        context: ZMQContext, type: ZMQSocketType, inboxLimit: Int = 10_000,
        host: (any DescriptorHost)? = nil,
        logger: Logger = Logger(label: "storekeeper.zeromq", factory: { _ in SwiftLogNoOpLogHandler() }),
        configure: @escaping @Sendable (ZMQSocket) throws -> Void
    ) {
        self.context = context
        self.type = type
        self.configure = configure
        self.host = host
        var logger = logger
        logger[metadataKey: "zmq.socket.type"] = "\(type)"
        self.logger = logger
        self.locked = Mutex(Locked(machine: Machine(inboxLimit: inboxLimit)))
    }

    /// Starts the socket's thread and returns when it has stopped and closed
    /// the socket: after cancellation of the calling task, `stop()`, or
    /// shutdown of the context (all return normally), or a failure of
    /// `configure` or libzmq (thrown). A second call throws `Closed`.
    public func run() async throws {
        let wakeup = try WakeupPipe()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
                let started = locked.withLock { state in
                    guard state.machine.start() else { return false }
                    state.finished = finished
                    state.wakeup = wakeup
                    return true
                }
                guard started else { return finished.resume(throwing: Closed()) }
                if let host, host.adopt(HostedSocketLoop(loop: self, wakeup: wakeup)) { return }
                startThread(wakeup: wakeup)
            }
        } onCancel: {
            stop()
        }
    }

    /// Serves the socket on a thread of the loop's own.
    func startThread(wakeup: WakeupPipe) {
        guard OSThread.start(name: "zmq-\(type)", { [self] in runThread(wakeup: wakeup) }) else {
            return finish(ZMQError(code: EAGAIN, operation: "pthread_create"))
        }
    }

    /// Hands every message received to `handler` instead of to `receive`:
    /// on the socket's thread, one at a time, in arrival order, with no lock
    /// held. Call it before `run()`. A `receive` then gets no message: it
    /// waits until the loop stops and throws `Closed`. The inbox stays empty,
    /// so `inboxLimit` no longer pushes back: only the handler's pace does.
    ///
    /// `handler` must return quickly and never block or suspend: the socket
    /// waits meanwhile. It suits a message that only resumes a waiter (a
    /// reply matched by its id), or a request handed on to a thread that
    /// answers it (the ledger's writer), where a receiving task costs a
    /// wake-up per message. It may send on this loop (`trySend`, `post`).
    public func handleEachMessage(_ handler: @escaping MessageHandler) {
        locked.withLock { state in
            precondition(state.machine.phase == .notStarted, "handleEachMessage must come before run()")
            state.messageHandler = handler
        }
    }

    /// Asks the loop to stop; `run()` returns once the socket is closed. Sends
    /// still waiting get one last non-blocking try, then fail with `Closed`.
    public func stop() {
        locked.withLock { state in
            if state.machine.requestStop() { state.wake() }
        }
    }

    /// Sends `frames` as one message and returns once libzmq accepted it:
    /// at once when nothing older is queued and libzmq takes it, otherwise
    /// through the socket's thread, suspending meanwhile (that is the
    /// back-pressure).
    ///
    /// Throws what libzmq refused it with (e.g. `EHOSTUNREACH` for a ROUTER
    /// with mandatory routing), `Closed` when the loop stopped first, or
    /// `CancellationError` when the task was cancelled before libzmq took it
    /// (then it is never sent). Throws `EINVAL` for an empty message.
    public func send(_ frames: [[UInt8]]) async throws {
        guard !frames.isEmpty else { throw ZMQError(code: EINVAL, operation: "zmq_send") }
        if !Task.isCancelled, try sendDirectly(frames) { return }
        let id = locked.withLock { $0.machine.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let action = locked.withLock { state in
                    let action = state.machine.enqueueSend(
                        id: id, frames: frames, waiter: .waiter(continuation), isCancelled: Task.isCancelled)
                    if case .wake = action { state.wake() }
                    return action
                }
                if case .fail(let waiter, let failure) = action { waiter.fail(failure.error) }
            }
        } onCancel: {
            locked.withLock { $0.machine.cancelSend(id: id) }?.fail(CancellationError())
        }
    }

    /// Sends `frames` as one message without waiting: to libzmq at once when
    /// nothing older is queued and libzmq takes it, otherwise into the outbox
    /// behind what is there, for the socket's thread. Either way messages go
    /// out in the order they were sent or posted. For a caller that must not
    /// suspend and does not need libzmq's back-pressure (a reply matched by
    /// id, an event). `onFailure` hears what libzmq refused the message with
    /// (e.g. `EHOSTUNREACH`), or `Closed` when the loop stopped first; it may
    /// run on the caller's thread or the socket's.
    public func post(_ frames: [[UInt8]], onFailure: (@Sendable (any Error) -> Void)? = nil) {
        guard !frames.isEmpty else {
            onFailure?(ZMQError(code: EINVAL, operation: "zmq_send"))
            return
        }
        do {
            if try sendDirectly(frames) { return }
        } catch {
            onFailure?(error)
            return
        }
        let action = locked.withLock { state in
            let action = state.machine.enqueueSend(
                id: state.machine.makeID(), frames: frames, waiter: .posted(onFailure: onFailure), isCancelled: false)
            if case .wake = action { state.wake() }
            return action
        }
        if case .fail(let completion, let failure) = action { completion.fail(failure.error) }
    }

    /// Hands `frames` to libzmq now, or not at all: false, having sent
    /// nothing, when the loop does not run yet, older messages wait, or
    /// libzmq would block (high-water mark, no peer). Never suspends, so a
    /// loop that must go on whatever the peer does (a heartbeat) can skip a
    /// message instead of waiting. Throws what libzmq refused it with, and
    /// `EINVAL` for an empty message.
    public func trySend(_ frames: [[UInt8]]) throws(ZMQError) -> Bool {
        guard !frames.isEmpty else { throw ZMQError(code: EINVAL, operation: "zmq_send") }
        return try sendDirectly(frames)
    }

    /// The next message (all its frames), in arrival order. May be called
    /// before `run()`. Throws `Closed` once the loop stopped, and
    /// `CancellationError` when the task is cancelled while waiting; a message
    /// arriving after that goes to the next `receive`.
    public func receive() async throws -> [[UInt8]] {
        let id = locked.withLock { $0.machine.makeID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[[UInt8]], any Error>) in
                let action = locked.withLock { state in
                    let action = state.machine.receive(id: id, waiter: continuation, isCancelled: Task.isCancelled)
                    if case .resume(_, _, wake: true) = action { state.wake() }
                    return action
                }
                switch action {
                case .wait: break
                case .resume(let waiter, let message, _): waiter.resume(returning: message)
                case .fail(let waiter, let failure): waiter.resume(throwing: failure.error)
                }
            }
        } onCancel: {
            locked.withLock { $0.machine.cancelReceive(id: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Hands `frames` to libzmq on the caller's thread, with the lock held.
    /// False, having sent nothing, when the message must be queued instead:
    /// the loop does not run, older messages wait, or libzmq would block.
    private func sendDirectly(_ frames: [[UInt8]]) throws(ZMQError) -> Bool {
        try locked.withLock { state throws(ZMQError) -> Bool in
            guard state.machine.acceptsDirectSend, let socket = state.socket?.socket else { return false }
            let sent: Bool
            do throws(ZMQError) {
                sent = try socket.send(frames, dontWait: true)
            } catch {
                if state.machine.calledSocketDirectly(sent: false, readable: true) { state.wake() }
                throw error
            }
            // When the events cannot be read, the thread meets that failure itself.
            let readable = sent ? ((try? socket.events)?.contains(.readable) ?? true) : true
            if state.machine.calledSocketDirectly(sent: sent, readable: readable) { state.wake() }
            return sent
        }
    }

    // MARK: For tests and diagnostics

    /// Messages handed to `send` that libzmq has not taken yet.
    var queuedSendCount: Int { locked.withLock { $0.machine.queuedSendCount } }
    /// `receive` calls waiting for a message.
    var waitingReceiverCount: Int { locked.withLock { $0.machine.waitingReceiverCount } }
    /// Received messages waiting for a `receive`.
    var bufferedMessageCount: Int { locked.withLock { $0.machine.bufferedMessageCount } }
}

/// The loop's socket, shared by its thread and direct senders. Only ever
/// used with the loop's lock held, which is what makes it safe to share.
final class LockedSocket: @unchecked Sendable {
    let socket: ZMQSocket
    init(_ socket: ZMQSocket) { self.socket = socket }
}

extension SocketLoopFailure {
    var error: any Error {
        switch self {
        case .closed: ZMQSocketLoop.Closed()
        case .cancelled: CancellationError()
        }
    }
}
