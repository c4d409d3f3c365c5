import BenchmarkSupport
import Contracts
import Foundation
import LedgerClient
import Logging
import ProcessSpawn
import ZeroMQ

/// What one ZeroMQ hop between two of Storekeeper's processes costs, with
/// nothing else in it: the gateway's ledger client (`EnvelopeClient`, a
/// DEALER on a `ZMQSocketLoop`) against an echo process (a ROUTER on a
/// `ZMQSocketLoop` that sends back what it receives, no task per request).
/// Prints the CPU both processes used per round trip and their context
/// switches, with requests in flight at once (the closed loop's case) and
/// one at a time (requests spread out). A receipt through the stack crosses
/// processes at least three times (gateway to verifier, verifier to ledger,
/// ledger to gateway); today four (two round trips).
enum HopBenchmark {
    static let echoFlag = "--zeromq-echo"

    static func run(roundTrips: Int) async throws {
        let endpoint = "tcp://127.0.0.1:\(freePort())"
        let echo = try spawn(
            CommandLine.arguments[0], arguments: [echoFlag, endpoint], environment: ProcessInfo.processInfo.environment)
        defer { echo.terminateAndWait() }
        let context = ZMQContext()
        let client = EnvelopeClient(context: context, endpoint: endpoint, logger: Logger(label: "storekeeper.bench.hops"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            var ready = false
            for _ in 0..<100 where !ready { ready = await client.ping() }
            guard ready else { throw EchoNotReady() }
            print("one ZeroMQ round trip (EnvelopeClient to an echo ROUTER, two processes), \(roundTrips) of them:")
            for concurrency in [64, 1] {
                let count = concurrency == 1 ? roundTrips / 4 : roundTrips
                try await measure(client, count: count, concurrency: concurrency, echo: echo.pid)
            }
            let spreadOut = min(roundTrips / 20, 500)
            for gap in HopLatency.gaps {
                let latencies = try await HopLatency.throughLoops(client, envelope: envelope, count: spreadOut, gap: gap)
                print("  through the socket loops, \(spreadOut) one every \(gap): \(HopLatency.describe(latencies))")
            }
            group.cancelAll()
        }
        let rawEndpoint = "tcp://127.0.0.1:\(freePort())"
        let rawEcho = try spawn(
            CommandLine.arguments[0], arguments: [HopLatency.rawEchoFlag, rawEndpoint],
            environment: ProcessInfo.processInfo.environment)
        defer { rawEcho.terminateAndWait(signal: SIGKILL) }
        let spreadOut = min(roundTrips / 20, 500)
        let bare = try HopLatency.throughBareLibzmq(
            endpoint: rawEndpoint, message: [try envelope.serializedBytes()], count: spreadOut)
        for (gap, latencies) in zip(HopLatency.gaps, bare) {
            print("  bare blocking libzmq (no socket loop), \(spreadOut) one every \(gap): \(HopLatency.describe(latencies))")
        }
    }

    static let envelope = {
        var envelope = Envelope()
        envelope.contractVersion = ContractVersion.current
        envelope.requestID = UUID().uuidString
        envelope.recordRequest.userID = "user-0001"
        return envelope
    }()

    private static func measure(_ client: EnvelopeClient, count: Int, concurrency: Int, echo: Int32) async throws {
        let me = getpid()
        let (cpuBefore, echoCPUBefore) = (cpuSeconds(me), cpuSeconds(echo))
        let (switchesBefore, echoSwitchesBefore) = (contextSwitches(me), contextSwitches(echo))
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<concurrency {
                group.addTask {
                    for _ in stride(from: lane, to: count, by: concurrency) { _ = try await client.request(envelope) }
                }
            }
            try await group.waitForAll()
        }
        let wall = (ContinuousClock.now - started).seconds
        let clientCPU = (cpuSeconds(me) - cpuBefore) * 1_000 / Double(count)
        let echoCPU = (cpuSeconds(echo) - echoCPUBefore) * 1_000 / Double(count)
        let switches = Double(contextSwitches(me) - switchesBefore + contextSwitches(echo) - echoSwitchesBefore)
        print(
            "  \(concurrency) at once: \(Int(Double(count) / wall)) round trips/s; CPU ms per round trip: client "
                + String(format: "%.3f, echo %.3f, both %.3f", clientCPU, echoCPU, clientCPU + echoCPU)
                + String(format: "; context switches per round trip %.1f", switches / Double(count)))
    }

    /// The echo process: sends every message back to where it came from.
    static func echo(_ endpoint: String) async throws {
        let context = ZMQContext()
        let socket = ZMQSocketLoop(context: context, type: .router) { socket in
            try socket.setSendHighWaterMark(100_000)
            try socket.setReceiveHighWaterMark(100_000)
            try socket.bind(endpoint)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await socket.run() }
            while true { try await socket.send(try await socket.receive()) }
        }
    }

    struct EchoNotReady: Error {}
}
