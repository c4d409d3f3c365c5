import CZeroMQ
import Testing

@testable import ZeroMQ

@Suite struct ZMQErrorTests {
    @Test func helpersRecogniseTheCodesLoopsCareAbout() {
        let wouldBlock = ZMQError(code: EAGAIN, operation: "zmq_send")
        let terminated = ZMQError(code: ETERM, operation: "zmq_poll")
        let interrupted = ZMQError(code: EINTR, operation: "zmq_poll")
        #expect(wouldBlock.isWouldBlock && !wouldBlock.isTerminated && !wouldBlock.isInterrupted)
        #expect(terminated.isTerminated && ZMQError.isTerminated(terminated))
        #expect(interrupted.isInterrupted && ZMQError.isInterrupted(interrupted))
        #expect(ZMQError.isWouldBlock(wouldBlock))
        #expect(!ZMQError.isWouldBlock(CancellationError()))
        #expect(terminated.description == "zmq_poll: Context was terminated")
    }
}
