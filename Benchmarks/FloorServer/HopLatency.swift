import BenchmarkSupport
import Contracts
import Foundation
import LedgerClient
import ZeroMQ

/// How long one ZeroMQ round trip takes when requests arrive spread out (one
/// every gap of `gaps`: 20 ms, so every thread on the way has gone to sleep,
/// and (c)'s 700 a second), through
/// Storekeeper's socket loops and through bare blocking libzmq calls. The
/// difference is what the loops' thread hand-offs add to each crossing; the
/// bare figure is what libzmq's own I/O threads cost, which no design on
/// ZeroMQ avoids.
enum HopLatency {
    static let rawEchoFlag = "--zeromq-echo-raw"
    static let gaps: [Duration] = [.milliseconds(20), .microseconds(1_429)]

    /// Round trips through `client`, one every `gap`: their durations, sorted.
    static func throughLoops(_ client: EnvelopeClient, envelope: Envelope, count: Int, gap: Duration) async throws -> [Duration] {
        var latencies: [Duration] = []
        for _ in 0..<count {
            try await Task.sleep(for: gap)
            let started = ContinuousClock.now
            _ = try await client.request(envelope)
            latencies.append(.now - started)
        }
        return latencies.sorted()
    }

    /// The same with a blocking DEALER on a thread of its own against the raw echo, for each of `gaps`.
    static func throughBareLibzmq(endpoint: String, message: [[UInt8]], count: Int) throws -> [[Duration]] {
        let context = ZMQContext()
        let socket = try ZMQSocket(context: context, type: .dealer)
        defer { socket.close() }
        try socket.connect(endpoint)
        try socket.send(message)
        _ = try socket.receive()
        let latencies = try gaps.map { gap in
            var latencies: [Duration] = []
            for _ in 0..<count {
                Thread.sleep(forTimeInterval: gap.seconds)
                let started = ContinuousClock.now
                try socket.send(message)
                _ = try socket.receive()
                latencies.append(.now - started)
            }
            return latencies.sorted()
        }
        try socket.send([[]])  // the echo's cue to exit
        return latencies
    }

    static func describe(_ sorted: [Duration]) -> String {
        func ms(_ quantile: Double) -> String {
            let index = min(sorted.count - 1, Int(Double(sorted.count) * quantile))
            return String(format: "%.3f", sorted[index].seconds * 1_000)
        }
        return "p50 \(ms(0.5)) ms, p90 \(ms(0.9)) ms, p99 \(ms(0.99)) ms"
    }

    /// The raw echo process: one blocking ROUTER, no loop, no task. It
    /// blocks in libzmq, where SIGTERM does not reach it, so an empty message
    /// ends it.
    static func rawEcho(_ endpoint: String) throws {
        let context = ZMQContext()
        let socket = try ZMQSocket(context: context, type: .router)
        defer { socket.close() }
        try socket.bind(endpoint)
        while let message = try socket.receive(), message.last?.isEmpty == false { try socket.send(message) }
    }
}
