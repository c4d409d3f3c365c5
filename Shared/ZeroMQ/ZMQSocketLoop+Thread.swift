import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket's thread: everything here runs on it. It creates, configures
/// and closes the socket; in between, it and direct senders use the socket
/// only with the loop's lock held. See `ZMQSocketLoop` for the model.
extension ZMQSocketLoop {
    /// Messages moved per direction in one turn, so a busy inbound stream
    /// cannot starve outbound messages (or the reverse).
    static let batchLimit = 512
    /// The retry interval when `ZMQ_POLLOUT` cannot be trusted (see `serve`).
    static let blockedRetryMilliseconds = 10
    /// Turns without blocking after one with traffic (see `serve`).
    static let busyTurns = 2

    func runThread(wakeup: WakeupPipe) {
        var failure: (any Error)?
        if !locked.withLock({ $0.machine.stopRequested }) {
            do {
                let socket = try ZMQSocket(context: context, type: type)
                defer { socket.close() }
                try configure(socket)
                let signal = try socket.signalDescriptor
                let shared = LockedSocket(socket)
                let handler = locked.withLock { state in
                    state.socket = shared
                    return state.messageHandler
                }
                defer { locked.withLock { $0.socket = nil } }
                logger.debug("ZeroMQ socket loop started")
                try serve(socket, signal: signal, wakeup: wakeup, handler: handler)
            } catch let error as ZMQError where error.isTerminated {
                logger.debug("ZeroMQ context shut down: socket loop stopping")
            } catch {
                logger.debug("ZeroMQ socket loop failed", metadata: ["error": "\(error)"])
                failure = error
            }
        }
        finish(failure)
    }

    /// Turns until a stop is requested. Each turn reads the state and the
    /// socket's events together, with the lock held; with nothing to do it
    /// waits in `poll` (finite) on `ZMQ_FD` and the pipe, and turns again;
    /// otherwise it sends and receives what can be without blocking. Reading
    /// the events after every call on the socket (a direct `send` may have
    /// been the last) and before every wait is what `ZMQ_FD`'s edge
    /// signalling needs; a direct send that may have taken the signal wakes
    /// the thread (`calledSocketDirectly`).
    ///
    /// After a turn with traffic, the next `busyTurns` idle turns yield the
    /// core and look (time-out 0) instead of sleeping: a message just handed
    /// over is usually followed by another within microseconds, and catching
    /// it without a sleep and a wake-up made the 100,000-message echo test
    /// about a quarter faster on a busy 2-core machine.
    private func serve(
        _ socket: ZMQSocket, signal: Int32, wakeup: WakeupPipe, handler: MessageHandler?
    ) throws(ZMQError) {
        // The last send would block: wait for ZMQ_POLLOUT before trying again.
        var sendBlocked = false
        // ZMQ_POLLOUT said writable and still not one message went (a ROUTER
        // with mandatory routing reports writable while one peer is at its
        // high-water mark): retry on a short timer instead of spinning.
        var pollOutUnreliable = false
        // A wait ended (the retry timer, or any signal): try the blocked send once more.
        var retryDue = false
        var busyTurnsLeft = 0
        while true {
            let (turn, events, work) = try locked.withLock {
                state throws(ZMQError) -> (SocketLoopStateMachine.Turn, ZMQEvents, TurnWork) in
                let turn = state.machine.beginTurn()
                let events = try socket.events
                let work = TurnWork(
                    send: turn.hasOutgoing
                        && (!sendBlocked || retryDue || (events.contains(.writable) && !pollOutUnreliable)),
                    receive: turn.inboxHasRoom && events.contains(.readable))
                // It turns again before it can wait: changes meanwhile need no wake-up.
                if work.any || turn.stop { state.machine.willTurnAgain() }
                return (turn, events, work)
            }
            if turn.stop {
                // One last try for what libzmq takes at once; the rest fails with Closed.
                if turn.hasOutgoing { _ = try flushOutbox(socket) }
                return
            }
            guard work.any else {
                let timeout: Int
                if busyTurnsLeft > 0 {
                    busyTurnsLeft -= 1
                    sched_yield()
                    timeout = 0
                } else if turn.hasOutgoing && pollOutUnreliable {
                    timeout = min(Self.blockedRetryMilliseconds, pollIntervalMilliseconds)
                } else {
                    timeout = pollIntervalMilliseconds
                }
                let ready = try ZMQPoller.readable([signal, wakeup.readEnd], timeoutMilliseconds: timeout)
                if ready[1] { wakeup.drain() }
                retryDue = turn.hasOutgoing && pollOutUnreliable
                continue
            }
            var traffic = false
            if work.send {
                let signalledWritable = sendBlocked && events.contains(.writable)
                let flushed = try flushOutbox(socket)
                sendBlocked = flushed.blocked
                pollOutUnreliable = flushed.blocked && flushed.sent == 0 && (signalledWritable || pollOutUnreliable)
                retryDue = false
                traffic = flushed.sent > 0
            }
            if work.receive {
                traffic = try fillInbox(socket, handler: handler) > 0 || traffic
            }
            if traffic { busyTurnsLeft = Self.busyTurns }
        }
    }

    /// What a turn found to do.
    struct TurnWork {
        var send: Bool
        var receive: Bool
        var any: Bool { send || receive }
    }

    /// What became of the oldest queued message.
    private enum FlushStep {
        case empty
        case sent(SendCompletion)
        /// libzmq would block: back at the head of the outbox.
        case blocked
        case failed(SendCompletion, ZMQError)
    }

    /// Hands queued messages to libzmq, oldest first, until the outbox is
    /// empty, a batch went out, or libzmq would block (`blocked`). `sent`
    /// counts the messages libzmq took. Waiters are resumed outside the lock.
    private func flushOutbox(_ socket: ZMQSocket) throws(ZMQError) -> (blocked: Bool, sent: Int) {
        var sent = 0
        for _ in 0..<Self.batchLimit {
            let step = locked.withLock { state -> FlushStep in
                guard let message = state.machine.takeNextSend() else { return .empty }
                do throws(ZMQError) {
                    guard try socket.send(message.frames, dontWait: true) else {
                        state.machine.sendWouldBlock(message)
                        return .blocked
                    }
                    return .sent(message.waiter)
                } catch {
                    return .failed(message.waiter, error)
                }
            }
            switch step {
            case .empty:
                return (false, sent)
            case .sent(let waiter):
                waiter.succeed()
                sent += 1
            case .blocked:
                return (true, sent)
            case .failed(let waiter, let error):
                waiter.fail(error)
                if error.isTerminated { throw error }
            }
        }
        return (false, sent)
    }

    /// Moves waiting messages from libzmq to the handler, or to receivers or
    /// the inbox, until none is left, a batch came in, or the inbox is full.
    /// Returns how many.
    private func fillInbox(_ socket: ZMQSocket, handler: MessageHandler?) throws(ZMQError) -> Int {
        var received = 0
        while received < Self.batchLimit {
            let step = try locked.withLock {
                state throws(ZMQError) -> (receiver: CheckedContinuation<[[UInt8]], any Error>?, message: [[UInt8]], full: Bool)? in
                guard let message = try socket.receive(dontWait: true) else { return nil }
                if handler != nil { return (nil, message, false) }
                return (state.machine.deliver(message), message, state.machine.inboxIsFull)
            }
            guard let step else { break }
            received += 1
            if let handler {
                handler(step.message)
            } else {
                step.receiver?.resume(returning: step.message)
            }
            if step.full { break }
        }
        return received
    }

    /// The socket is closed (or its thread never started): fail whatever
    /// still waits, then let `run()` return.
    func finish(_ failure: (any Error)?) {
        let (leftovers, finished) = locked.withLock { state in
            let leftovers = state.machine.finish()
            defer {
                state.finished = nil
                state.wakeup = nil
            }
            return (leftovers, state.finished)
        }
        logger.debug(
            "ZeroMQ socket loop stopped",
            metadata: [
                "zmq.failed_sends": "\(leftovers.sends.count)",
                "zmq.failed_receives": "\(leftovers.receives.count)",
                "zmq.discarded_messages": "\(leftovers.discardedMessages)",
            ])
        for waiter in leftovers.sends { waiter.fail(Closed()) }
        for waiter in leftovers.receives { waiter.resume(throwing: Closed()) }
        if let failure { finished?.resume(throwing: failure) } else { finished?.resume() }
    }
}
