import Synchronization
import Testing

@testable import ZeroMQ

/// Messaging patterns end to end over tcp loopback, through the async socket loops.
@Suite struct ZMQPatternTests {
    let context = ZMQContext()

    /// Runs `body` while the loops run; stops them afterwards, whatever happens.
    func withLoops<T: Sendable>(
        _ loops: [ZMQSocketLoop], _ body: @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for loop in loops { group.addTask { try await loop.run() } }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// The endpoint a loop bound, read on its own thread through a probe.
    final class BoundEndpoint: Sendable {
        private let value = Mutex<String?>(nil)
        func set(_ endpoint: String) { value.withLock { $0 = endpoint } }
        func wait() async throws -> String {
            for _ in 0..<500 {
                if let endpoint = value.withLock({ $0 }) { return endpoint }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw ZMQSocketLoop.Closed()
        }
    }

    @Test func routerEchoesHundredThousandMultipartMessagesBackToTheDealer() async throws {
        let bound = BoundEndpoint()
        let router = ZMQSocketLoop(context: context, type: .router) { socket in
            try socket.setLinger(milliseconds: 0)
            // Without it a ROUTER silently drops what a slow peer's full pipe cannot take.
            try socket.setRouterMandatory(true)
            try socket.bind("tcp://127.0.0.1:*")
            bound.set(try socket.lastEndpoint())
        }
        let count = 100_000
        let received = try await withLoops([router]) {
            let endpoint = try await bound.wait()
            let dealer = ZMQSocketLoop(context: context, type: .dealer) { socket in
                try socket.setLinger(milliseconds: 0)
                try socket.connect(endpoint)
            }
            return try await withLoops([dealer]) {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    group.addTask {  // the echo server
                        for _ in 0..<count {
                            let message = try await router.receive()
                            try await router.send(message)  // [identity, seq, payload] back to its sender
                        }
                        return 0
                    }
                    group.addTask {  // the client's reader
                        var seen = 0
                        for expected in 0..<count {
                            let reply = try await dealer.receive()
                            #expect(reply.count == 2)
                            #expect(reply.first == Self.sequenceFrame(expected), "out of order or lost at \(expected)")
                            #expect(reply.last == Array("payload-\(expected % 7)".utf8))
                            seen += 1
                        }
                        return seen
                    }
                    for seq in 0..<count {
                        try await dealer.send([Self.sequenceFrame(seq), Array("payload-\(seq % 7)".utf8)])
                    }
                    var seen = 0
                    for try await result in group { seen += result }
                    return seen
                }
            }
        }
        #expect(received == count)
    }

    static func sequenceFrame(_ seq: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt64(seq).bigEndian) { Array($0) }
    }

    @Test func subscribersGetOnlyTheirTopics() async throws {
        let bound = BoundEndpoint()
        let publisher = ZMQSocketLoop(context: context, type: .pub) { socket in
            try socket.setLinger(milliseconds: 0)
            try socket.bind("tcp://127.0.0.1:*")
            bound.set(try socket.lastEndpoint())
        }
        try await withLoops([publisher]) {
            let endpoint = try await bound.wait()
            let subscriber = ZMQSocketLoop(context: context, type: .sub) { socket in
                try socket.setLinger(milliseconds: 0)
                try socket.subscribe("transaction.")
                try socket.connect(endpoint)
            }
            try await withLoops([subscriber]) {
                // Slow joiner: the subscription reaches the publisher some time after connect.
                // Publish probes on the subscribed topic until one arrives (bounded).
                let probe = Task {
                    for _ in 0..<500 {
                        try await publisher.send([Array("transaction.probe".utf8), []])
                        try await Task.sleep(for: .milliseconds(10))
                    }
                }
                let first = try await subscriber.receive()
                probe.cancel()
                _ = await probe.result
                #expect(first[0] == Array("transaction.probe".utf8))
                for index in 0..<100 {
                    try await publisher.send([Array("subscription.renewed".utf8), [UInt8(index)]])
                    try await publisher.send([Array("transaction.granted".utf8), [UInt8(index)]])
                }
                try await publisher.send([Array("transaction.end".utf8), []])
                var granted = 0
                while true {
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
