import OSThread

/// A socket loop served in the turns of another loop's thread (a
/// `DescriptorHost`) instead of a thread of its own: the host waits on
/// `ZMQ_FD` and the loop's pipe beside its own descriptors and calls
/// `service()` when either is readable. The turns are the thread loop's
/// (`turnUntilIdle`), so the model, the lock and back-pressure are the same;
/// only the wait is the host's, without the thread loop's busy turns (the
/// host turns anyway).
///
/// Every call comes from the host's thread, one at a time, so the state
/// below needs no lock of its own: that is the `@unchecked Sendable`.
final class HostedSocketLoop: DescriptorGuest, @unchecked Sendable {
    private let loop: ZMQSocketLoop
    private let wakeup: WakeupPipe
    private var socket: ZMQSocket?
    private var handler: ZMQSocketLoop.MessageHandler?
    private var serving = ZMQSocketLoop.ServingState()
    private var failure: (any Error)?
    private var attached = false

    init(loop: ZMQSocketLoop, wakeup: WakeupPipe) {
        self.loop = loop
        self.wakeup = wakeup
    }

    func attach() -> [Int32]? {
        attached = true
        guard !loop.locked.withLock({ $0.machine.stopRequested }) else {
            loop.finish(nil)
            return nil
        }
        do {
            let opened = try loop.openSocket()
            (socket, handler) = (opened.socket, opened.handler)
            return [opened.signal, wakeup.readEnd]
        } catch {
            loop.finish(loop.reportable(error))
            return nil
        }
    }

    func service() -> DescriptorGuestTurn {
        guard let socket else { return .done }
        // Before the turns: a wake-up written during them makes the next service.
        wakeup.drain()
        do {
            guard case .idle(let hasOutgoing) = try loop.turnUntilIdle(socket, &serving, handler: handler) else {
                return .done
            }
            let retry = serving.retryMilliseconds(hasOutgoing: hasOutgoing)
            serving.waitEnded(hasOutgoing: hasOutgoing)
            return .wait(milliseconds: retry)
        } catch {
            failure = loop.reportable(error)
            return .done
        }
    }

    func detach(hostStopping: Bool) {
        guard attached else {
            // The host ended before it took the socket on: a thread of the loop's own serves it.
            return loop.startThread(wakeup: wakeup)
        }
        if hostStopping, failure == nil {
            loop.logger.debug("ZeroMQ socket loop's host stopped: socket loop stopping")
        }
        if let socket { loop.closeSocket(socket) }
        socket = nil
        loop.finish(failure)
    }
}
