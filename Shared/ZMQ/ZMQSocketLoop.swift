import DequeModule
import Foundation
import Synchronization

/// One ZeroMQ socket on its own thread, used from async code.
///
/// Threading model: libzmq sockets are not thread-safe and their calls block,
/// so neither may touch Swift's cooperative pool. The socket is created,
/// configured, polled and closed by one dedicated thread, started by `run()`.
/// Async callers hand messages over through a locked outbox (and a self-pipe
/// that wakes the thread's `zmq_poll`), and take received messages from a
/// locked inbox. Both directions push back: `send` resumes only once libzmq
/// accepted the message (a full HWM keeps senders waiting), and when the
/// inbox holds `inboxLimit` messages the thread stops reading, so libzmq's
/// own HWM throttles the peer.
public final class ZMQSocketLoop: Sendable {
    /// Thrown by `send` and `receive` once the loop has stopped.
    public struct Closed: Error, Equatable, CustomStringConvertible {
        public var description: String { "socket loop stopped" }
    }

    typealias Message = [[UInt8]]

    struct Receiver {
        let id: UInt64
        let deadline: ContinuousClock.Instant?
        let continuation: CheckedContinuation<Message?, any Error>
    }

    struct State: ~Copyable {
        var started = false
        var stopRequested = false
        var stopped = false
        var outbox = Deque<(Message, CheckedContinuation<Void, any Error>)>()
        var inbox = Deque<Message>()
        var receivers = Deque<Receiver>()
        var nextReceiverID: UInt64 = 0
        var finished: CheckedContinuation<Void, any Error>?
    }

    private let context: ZMQContext
    private let type: ZMQSocketType
    private let configure: @Sendable (ZMQSocket) throws -> Void
    private let inboxLimit: Int
    private let pollInterval: Int
    private let state = Mutex(State())
    private let wakeup = WakeupPipe()

    /// `configure` runs on the socket's thread before anything else: bind or connect and set options there.
    public init(
        context: ZMQContext, type: ZMQSocketType, inboxLimit: Int = 10_000, pollIntervalMilliseconds: Int = 100,
        configure: @escaping @Sendable (ZMQSocket) throws -> Void
    ) {
        self.context = context
        self.type = type
        self.configure = configure
        self.inboxLimit = inboxLimit
        self.pollInterval = pollIntervalMilliseconds
    }

    /// Runs the socket's thread until the calling task is cancelled (or the
    /// socket fails); then closes the socket and fails what still waits.
    public func run() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (finished: CheckedContinuation<Void, any Error>) in
                let alreadyStarted = state.withLock { state -> Bool in
                    if state.started { return true }
                    state.started = true
                    state.finished = finished
                    return false
                }
                if alreadyStarted {
                    finished.resume(throwing: Closed())
                    return
                }
                let thread = Thread { [self] in threadMain() }
                thread.name = "zmq-\(type)"
                thread.start()
            }
        } onCancel: {
            stop()
        }
    }

    /// Asks the loop to stop; `run()` returns once the socket is closed.
    public func stop() {
        state.withLock { $0.stopRequested = true }
        wakeup.wake()
    }

    /// Queues `frames` as one message; returns once libzmq accepted it.
    public func send(_ frames: [[UInt8]]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.outbox.append((frames, continuation))
                return true
            }
            if accepted { wakeup.wake() } else { continuation.resume(throwing: Closed()) }
        }
    }

    /// The next received message.
    public func receive() async throws -> [[UInt8]] {
        while true {
            if let message = try await receive(timeout: nil) { return message }
        }
    }

    /// The next received message, or nil when none came within `timeout`
    /// (checked on the loop's poll interval, so it may run that much longer).
    public func receive(timeout: Duration?) async throws -> [[UInt8]]? {
        let id = state.withLock { state -> UInt64 in
            state.nextReceiverID += 1
            return state.nextReceiverID
        }
        let deadline = timeout.map { ContinuousClock.now + $0 }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Message?, any Error>) in
                enum Immediate { case message(Message, wasFull: Bool), closed, cancelled, wait }
                let immediate = state.withLock { state -> Immediate in
                    if let message = state.inbox.popFirst() {
                        return .message(message, wasFull: state.inbox.count + 1 >= inboxLimit)
                    }
                    if state.stopped { return .closed }
                    if Task.isCancelled { return .cancelled }
                    state.receivers.append(Receiver(id: id, deadline: deadline, continuation: continuation))
                    return .wait
                }
                switch immediate {
                case .message(let message, let wasFull):
                    // The thread may have stopped reading at the limit: tell it there is room again.
                    if wasFull { wakeup.wake() }
                    continuation.resume(returning: message)
                case .closed: continuation.resume(throwing: Closed())
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let waiting = state.withLock { state -> CheckedContinuation<Message?, any Error>? in
                guard let index = state.receivers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.receivers.remove(at: index).continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    // MARK: The socket's thread

    private func threadMain() {
        var failure: (any Error)?
        do {
            let socket = try ZMQSocket(context: context, type: type)
            defer { socket.close() }
            try configure(socket)
            try serve(socket)
        } catch {
            failure = error
        }
        finish(failure)
    }

    private func serve(_ socket: ZMQSocket) throws {
        var blockedOnSend = false
        while true {
            let (stop, hasOutgoing, hasRoom) = state.withLock { state in
                (state.stopRequested, !state.outbox.isEmpty, state.inbox.count < inboxLimit)
            }
            if stop { return }
            let ready = try ZMQPoller.poll(
                [.socket(socket, readable: hasRoom, writable: hasOutgoing && blockedOnSend), .fileDescriptor(wakeup.readEnd)],
                timeoutMilliseconds: hasOutgoing && !blockedOnSend ? 0 : pollInterval)
            if ready[1].readable { wakeup.drain() }
            if hasOutgoing { blockedOnSend = try flushOutbox(socket) }
            if hasRoom && (ready[0].readable || socket.events.readable) { try fillInbox(socket) }
            expireReceivers()
        }
    }

    /// Sends queued messages until the outbox is empty or libzmq would block; true if it would block.
    private func flushOutbox(_ socket: ZMQSocket) throws -> Bool {
        while let (frames, continuation) = state.withLock({ $0.outbox.first }) {
            let sent: Bool
            do {
                sent = try socket.send(frames, dontWait: true)
            } catch {
                _ = state.withLock { $0.outbox.popFirst() }
                continuation.resume(throwing: error)
                if error.isTerminated { throw error }
                continue
            }
            if !sent { return true }
            _ = state.withLock { $0.outbox.popFirst() }
            continuation.resume()
        }
        return false
    }

    /// Moves waiting messages from libzmq to receivers or the inbox, up to its limit.
    private func fillInbox(_ socket: ZMQSocket) throws {
        while let message = try socket.receive(dontWait: true) {
            let receiver = state.withLock { state -> CheckedContinuation<Message?, any Error>? in
                if let waiting = state.receivers.popFirst() { return waiting.continuation }
                state.inbox.append(message)
                return nil
            }
            receiver?.resume(returning: message)
            if state.withLock({ $0.inbox.count >= inboxLimit }) { return }
        }
    }

    /// Resumes timed receivers whose time is up with nil.
    private func expireReceivers() {
        let now = ContinuousClock.now
        let expired = state.withLock { state -> [Receiver] in
            let isDue = { (receiver: Receiver) in receiver.deadline.map { $0 <= now } ?? false }
            let expired = state.receivers.filter(isDue)
            guard !expired.isEmpty else { return [] }
            state.receivers.removeAll(where: isDue)
            return Array(expired)
        }
        for receiver in expired { receiver.continuation.resume(returning: nil) }
    }

    private func finish(_ failure: (any Error)?) {
        let (outbox, receivers, finished) = state.withLock { state in
            state.stopped = true
            let pending = (Array(state.outbox), Array(state.receivers), state.finished)
            state.outbox.removeAll()
            state.receivers.removeAll()
            state.finished = nil
            return pending
        }
        for (_, continuation) in outbox { continuation.resume(throwing: Closed()) }
        for receiver in receivers { receiver.continuation.resume(throwing: Closed()) }
        if let failure { finished?.resume(throwing: failure) } else { finished?.resume() }
    }
}

extension Error {
    fileprivate var isTerminated: Bool { (self as? ZMQError)?.isTerminated ?? false }
}
