import ZeroMQTestSupport
import Testing

@testable import ZeroMQ

/// Messaging patterns end to end over TCP loopback, through socket loops.
@Suite struct ZMQPatternTests {
    let context = ZMQContext()

    /// Two DEALERs send 50,000 messages each to one ROUTER, which echoes every
    /// message to the identity it came from; each DEALER must get all of its
    /// own back, in order, and none of the other's. The dealers send directly
    /// while their replies stream in, and their threads wait up to a second
    /// at a time: dealers whose waits ended on the timer rather than on the
    /// socket's signal would run into the time limit.
    @Test(.timeLimit(.minutes(1)))
    func routerEchoesHundredThousandMessagesToTheRightDealers() async throws {
        let perDealer = 50_000
        let bound = Box<String>()
        let router = ZMQSocketLoop(context: context, type: .router) { socket in
            try socket.setRouterMandatory(true)
            try socket.bind("tcp://127.0.0.1:*")
            bound.set(try socket.lastEndpoint())
        }
        try await withRunning([router]) {
            let endpoint = try await bound.wait()
            let names = ["dealer-a", "dealer-b"]
            let dealers = names.map { name in
                ZMQSocketLoop(context: context, type: .dealer) { socket in
                    try socket.setRoutingID(bytes(name))
                    try socket.connect(endpoint)
                }
            }
            try await withRunning(dealers) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {  // the echo server: [identity, seq, payload] back to its sender
                        for _ in 0..<(perDealer * names.count) {
                            let message = try await router.receive()
                            #expect(message.count == 3 && names.map(bytes).contains(message[0]))
                            try await router.send(message)
                        }
                    }
                    for (name, dealer) in zip(names, dealers) {
                        group.addTask {
                            for seq in 0..<perDealer { try await dealer.send([frame(seq), Self.payload(name, seq)]) }
                        }
                        group.addTask {
                            var received = 0
                            for seq in 0..<perDealer {
                                let reply = try await dealer.receive()
                                guard reply == [frame(seq), Self.payload(name, seq)] else {
                                    Issue.record("\(name): lost, reordered or misrouted at \(seq)")
                                    return
                                }
                                received += 1
                            }
                            #expect(received == perDealer)
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
    }

    static func payload(_ name: String, _ seq: Int) -> [UInt8] {
        bytes("\(name):\(seq % 97)") + (seq % 5 == 0 ? [] : [0, 255, UInt8(seq % 256)])
    }

    /// A SUB subscribed to "transaction." gets "transaction.granted" and never
    /// "subscription.renewed". Slow joiner: a SUB's subscription reaches the
    /// PUB some time after connecting, so probes go out (bounded) until one
    /// arrives; only then does the real traffic start.
    @Test(.timeLimit(.minutes(1)))
    func subscribersGetOnlyTheirTopics() async throws {
        let bound = Box<String>()
        let publisher = ZMQSocketLoop(context: context, type: .pub) { socket in
            try socket.bind("tcp://127.0.0.1:*")
            bound.set(try socket.lastEndpoint())
        }
        try await withRunning([publisher]) {
            let endpoint = try await bound.wait()
            let subscriber = ZMQSocketLoop(context: context, type: .sub) { socket in
                try socket.subscribe("transaction.")
                try socket.connect(endpoint)
            }
            try await withRunning([subscriber]) {
                let first = try await withThrowingTaskGroup(of: [[UInt8]]?.self) { group in
                    group.addTask {
                        for _ in 0..<1_000 {
                            try await publisher.send([bytes("transaction.probe"), []])
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        return nil
                    }
                    group.addTask { try await subscriber.receive() }
                    defer { group.cancelAll() }
                    return try await group.next() ?? nil
                }
                #expect(first == [bytes("transaction.probe"), []])
                for index in 0..<100 {
                    try await publisher.send([bytes("subscription.renewed"), [UInt8(index)]])
                    try await publisher.send([bytes("transaction.granted"), [UInt8(index)]])
                }
                try await publisher.send([bytes("transaction.end"), []])
                var granted = 0
                for _ in 0..<10_000 {
                    let message = try await subscriber.receive()
                    let topic = String(decoding: message[0], as: UTF8.self)
                    #expect(topic.hasPrefix("transaction."), "got \(topic)")
                    if topic == "transaction.end" { break }
                    if topic == "transaction.granted" {
                        #expect(message[1] == [UInt8(granted)])
                        granted += 1
                    }
                }
                #expect(granted == 100)
            }
        }
    }
}
