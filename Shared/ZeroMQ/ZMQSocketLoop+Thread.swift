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
                let opened = try openSocket()
                defer { closeSocket(opened.socket) }
                try serve(opened.socket, signal: opened.signal, wakeup: wakeup, handler: opened.handler)
            } catch {
                failure = reportable(error)
            }
        }
        finish(failure)
    }

    /// On the thread that will serve it: creates the socket, configures it
    /// and shares it with direct senders. Closes it again when that fails.
    func openSocket() throws -> (socket: ZMQSocket, signal: Int32, handler: MessageHandler?) {
        let socket = try ZMQSocket(context: context, type: type)
        let signal: Int32
        do {
            try configure(socket)
            signal = try socket.signalDescriptor
        } catch {
            socket.close()
            throw error
        }
        let shared = LockedSocket(socket)
        let handler = locked.withLock { state in
            state.socket = shared
            return state.messageHandler
        }
        logger.debug("ZeroMQ socket loop started")
        return (socket, signal, handler)
    }

    /// On the thread that served it: no direct sender touches it after this.
    func closeSocket(_ socket: ZMQSocket) {
        locked.withLock { $0.socket = nil }
        socket.close()
    }

    /// What `run()` throws for `error`: nothing for the context's shutdown,
    /// which stops a loop as `stop()` does.
    func reportable(_ error: any Error) -> (any Error)? {
        if let error = error as? ZMQError, error.isTerminated {
            logger.debug("ZeroMQ context shut down: socket loop stopping")
            return nil
        }
        logger.debug("ZeroMQ socket loop failed", metadata: ["error": "\(error)"])
        return error
    }

    /// Turns until a stop is requested, waiting in `poll` on `ZMQ_FD` and the
    /// pipe whenever a turn finds nothing to do: with no time-out unless a
    /// blocked send needs a retry timer.
    ///
    /// After a turn with traffic, the next `busyTurns` idle turns yield the
    /// core and look (time-out 0) instead of sleeping: a message just handed
    /// over is usually followed by another within microseconds, and catching
    /// it without a sleep and a wake-up made the 100,000-message echo test
    /// about a quarter faster on a busy 2-core machine.
    private func serve(
        _ socket: ZMQSocket, signal: Int32, wakeup: WakeupPipe, handler: MessageHandler?
    ) throws(ZMQError) {
        var serving = ServingState()
        while true {
            guard case .idle(let hasOutgoing) = try turnUntilIdle(socket, &serving, handler: handler) else { return }
            let timeout: Int?
            if serving.busyTurnsLeft > 0 {
                serving.busyTurnsLeft -= 1
                sched_yield()
                timeout = 0
            } else {
                timeout = serving.retryMilliseconds(hasOutgoing: hasOutgoing)
            }
            let ready = try ZMQPoller.readable([signal, wakeup.readEnd], timeoutMilliseconds: timeout)
            if ready[1] { wakeup.drain() }
            serving.waitEnded(hasOutgoing: hasOutgoing)
        }
    }

    /// What serving the socket remembers from one turn to the next.
    struct ServingState {
        /// The last send would block: wait for ZMQ_POLLOUT before trying again.
        var sendBlocked = false
        /// ZMQ_POLLOUT said writable and still not one message went (a ROUTER
        /// with mandatory routing reports writable while one peer is at its
        /// high-water mark): retry on a short timer instead of spinning.
        var pollOutUnreliable = false
        /// A wait ended (the retry timer, or any signal): try the blocked send once more.
        var retryDue = false
        var busyTurnsLeft = 0

        /// How long an idle socket may wait before it retries a blocked
        /// send; nil when only a signal needs it.
        func retryMilliseconds(hasOutgoing: Bool) -> Int? {
            hasOutgoing && pollOutUnreliable ? ZMQSocketLoop.blockedRetryMilliseconds : nil
        }

        mutating func waitEnded(hasOutgoing: Bool) {
            retryDue = hasOutgoing && pollOutUnreliable
        }
    }

    /// How `turnUntilIdle` ended.
    enum TurnsEnded {
        case stop
        /// Nothing to do without waiting; `hasOutgoing`: messages wait to go.
        case idle(hasOutgoing: Bool)
    }

    /// Turns while there is work that needs no waiting. Each turn reads the
    /// state and the socket's events together, with the lock held, then
    /// sends and receives what can be without blocking. It returns only
    /// after a turn that found nothing to do, so the events were read after
    /// every call on the socket (a direct `send` may have been the last):
    /// that is what `ZMQ_FD`'s edge signalling needs before a wait; a direct
    /// send that may have taken the signal wakes the loop
    /// (`calledSocketDirectly`).
    func turnUntilIdle(
        _ socket: ZMQSocket, _ serving: inout ServingState, handler: MessageHandler?
    ) throws(ZMQError) -> TurnsEnded {
        while true {
            let (sendBlocked, retryDue, pollOutUnreliable) =
                (serving.sendBlocked, serving.retryDue, serving.pollOutUnreliable)
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
                return .stop
            }
            guard work.any else { return .idle(hasOutgoing: turn.hasOutgoing) }
            var traffic = false
            if work.send {
                let signalledWritable = serving.sendBlocked && events.contains(.writable)
                let flushed = try flushOutbox(socket)
                serving.sendBlocked = flushed.blocked
                serving.pollOutUnreliable =
                    flushed.blocked && flushed.sent == 0 && (signalledWritable || serving.pollOutUnreliable)
                serving.retryDue = false
                traffic = flushed.sent > 0
            }
            if work.receive {
                traffic = try fillInbox(socket, handler: handler) > 0 || traffic
            }
            if traffic { serving.busyTurnsLeft = Self.busyTurns }
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
