import CZeroMQ

public enum ZMQSocketType: Sendable {
    case router, dealer, pub, sub, push, pull, pair, req, rep

    var rawValue: Int32 {
        switch self {
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .push: ZMQ_PUSH
        case .pull: ZMQ_PULL
        case .pair: ZMQ_PAIR
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        }
    }
}
