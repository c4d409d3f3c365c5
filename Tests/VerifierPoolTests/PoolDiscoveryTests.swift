import ZeroMQTestSupport
import Contracts
import Foundation
import Logging
import ServiceLifecycle
import Testing
import ZeroMQ

@testable import VerifierPool

/// A verifier's pool workers following DNS, in-process over loopback TCP: a
/// real gateway end of the pool (`VerifierPoolClient`), real workers, and a
/// resolver the test scripts. Every gateway binds 127.0.0.1; the name
/// `gateways.test` resolves to it only while the test says so.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PoolDiscoveryTests {
    static let name = "gateways.test"

    let zmq = ZMQContext()
    let resolver = ScriptedResolver()
    let handler = TestHandler()

    func discovery(
        endpoints: [String], maxInFlight: Int = 8, gatewayDeadAfter: Duration = .seconds(3),
        heartbeatInterval: Duration = .seconds(1), built: Latest<PoolWorker>? = nil
    ) -> PoolDiscovery {
        let zmq = zmq
        let handler = handler
        return PoolDiscovery(
            endpoints: endpoints, maxInFlight: maxInFlight, resolver: resolver, resolveInterval: .milliseconds(50),
            logger: quietLogger
        ) { endpoint, capacity in
            let worker = PoolWorker(
                context: zmq, endpoint: endpoint, capacity: capacity, gatewayDeadAfter: gatewayDeadAfter,
                heartbeatInterval: heartbeatInterval, sendHighWaterMark: nil, logger: quietLogger, handler: handler.handle)
            built?.set(worker)
            return worker
        }
    }

    /// A gateway's end of the pool on 127.0.0.1, at the port the system gave it, running until `stop`.
    struct Gateway {
        let client: VerifierPoolClient
        let task: Task<Void, any Error>
        let port: Int

        static func start(context: ZMQContext) async throws -> Gateway {
            let client = VerifierPoolClient(context: context, endpoint: "tcp://127.0.0.1:*", logger: quietLogger)
            let task = Task { try await client.run() }
            guard await eventually({ client.endpoint != nil }), let endpoint = client.endpoint,
                let port = endpoint.split(separator: ":").last.flatMap({ Int($0) })
            else {
                task.cancel()
                throw NotBound()
            }
            return Gateway(client: client, task: task, port: port)
        }

        struct NotBound: Error {}

        func stop() async {
            task.cancel()
            _ = await task.result
        }
    }

    /// Runs `body` with a gateway on 127.0.0.1:`port`, and stops it afterwards (also when `body` stopped it).
    func withGateway(_ body: (Gateway) async throws -> Void) async throws {
        let gateway = try await Gateway.start(context: zmq)
        do {
            try await body(gateway)
        } catch {
            await gateway.stop()
            throw error
        }
        await gateway.stop()
    }

    /// Runs `discovery` in a service group, and stops it the way SIGTERM does once `body` is done.
    func withRunning(_ discovery: PoolDiscovery, _ body: () async throws -> Void) async throws {
        let group = ServiceGroup(services: [discovery], logger: quietLogger)
        let running = Task { try await group.run() }
        do {
            try await body()
        } catch {
            await group.triggerGracefulShutdown()
            _ = await running.result
            throw error
        }
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(discovery.runningWorkerCount == 0)
    }

    @Test func aGatewayThatAppearsInDNSLaterIsServedAndOneGoneFromDNSIsNot() async throws {
        try await withGateway { gateway in
            let port = gateway.port
            let discovery = discovery(endpoints: ["tcp://\(Self.name):\(port)"])
            try await withRunning(discovery) {
                // The name has no address yet, so nothing is connected.
                #expect(await eventually { discovery.completedRounds >= 2 })
                #expect(discovery.connectedEndpoints.isEmpty)
                #expect(gateway.client.workerCount == 0)

                resolver.set(Self.name, .addresses(["127.0.0.1"]))
                #expect(await eventually { gateway.client.workerCount == 1 })
                #expect(discovery.connectedEndpoints == ["tcp://127.0.0.1:\(port)"])
                let answer = try await gateway.client.verify(request("r-1", deadline: .seconds(10)))
                #expect(answer.requestID == "r-1")

                // The gateway leaves DNS (scaled down, draining): the worker says goodbye and stops.
                resolver.set(Self.name, .addresses([]))
                #expect(await eventually { gateway.client.workerCount == 0 })
                #expect(await eventually { discovery.runningWorkerCount == 0 })
                #expect(discovery.connectedEndpoints.isEmpty)
                await #expect(throws: VerifierPoolClient.Unavailable()) {
                    try await gateway.client.verify(request("r-2", deadline: .milliseconds(500)))
                }

                // It comes back (or another gateway gets its address): served again.
                resolver.set(Self.name, .addresses(["127.0.0.1"]))
                #expect(await eventually { gateway.client.workerCount == 1 })
                #expect(try await gateway.client.verify(request("r-3", deadline: .seconds(10))).requestID == "r-3")
            }
        }
    }

    @Test func aWorkerWhoseGatewayDiedLeavesAtOnceAndDropsWhatItHeld() async throws {
        let built = Latest<PoolWorker>()
        resolver.set(Self.name, .addresses(["127.0.0.1"]))
        try await withGateway { gateway in
            // Gateways heartbeat every second: a gateway silent 1.5 s is gone.
            let discovery = discovery(
                endpoints: ["tcp://\(Self.name):\(gateway.port)"], gatewayDeadAfter: .milliseconds(1_500), built: built)
            try await withRunning(discovery) {
                #expect(await eventually { gateway.client.workerCount == 1 })
                let held = Task { try await gateway.client.verify(request("hold-1", deadline: .seconds(60))) }
                #expect(await eventually { handler.holding == 1 })

                // The gateway dies, then its address leaves DNS.
                await gateway.stop()
                _ = await held.result
                let worker = try #require(built.current)
                #expect(await eventually { worker.gatewayIsSilent })
                resolver.set(Self.name, .addresses([]))
                // A goodbye would wait for the held request, which never ends by itself: the worker
                // stopping proves it disconnected at once and cancelled what it held.
                #expect(await eventually { discovery.runningWorkerCount == 0 })
                #expect(handler.cancelled == 1)
            }
        }
    }

    @Test func eachWorkerAnnouncesItsShareAsPoolsComeAndGo() async throws {
        // The refresh pool, as a bare ROUTER that reads what its worker announces.
        let refresh = try ZMQSocket(context: zmq, type: .router)
        try refresh.bind("tcp://127.0.0.1:*")
        let refreshEndpoint = try refresh.lastEndpoint()
        // The named pool: a bare ROUTER that answers nothing (a connected worker holds its share either way).
        let pool = try ZMQSocket(context: zmq, type: .router)
        try pool.bind("tcp://127.0.0.1:*")
        let port = try #require(try pool.lastEndpoint().split(separator: ":").last.flatMap { Int($0) })
        let discovery = discovery(endpoints: ["tcp://\(Self.name):\(port)", refreshEndpoint], maxInFlight: 8)
        try await withRunning(discovery) {
            #expect(await announces(8, on: refresh))
            resolver.set(Self.name, .addresses(["127.0.0.1"]))
            #expect(await announces(4, on: refresh))
            #expect(discovery.connectedEndpoints.count == 2)
            resolver.set(Self.name, .addresses([]))
            #expect(await announces(8, on: refresh))
        }
    }

    @Test func aGatewayFoundLaterCountsAsServedOnlyOnceItHasAShare() async throws {
        // The refresh pool, as a bare ROUTER: joined alone, its worker holds all 8.
        let refresh = try ZMQSocket(context: zmq, type: .router)
        try refresh.bind("tcp://127.0.0.1:*")
        let refreshEndpoint = try refresh.lastEndpoint()
        try await withGateway { gateway in
            // Two-second beats: the refresh pool gives up its half two reports later, so the
            // gateway's share stays 0 for seconds, far longer than a poll of 10 ms can miss.
            let discovery = discovery(
                endpoints: [refreshEndpoint, "tcp://\(Self.name):\(gateway.port)"], heartbeatInterval: .seconds(2))
            try await withRunning(discovery) {
                #expect(await announces(8, on: refresh))
                resolver.set(Self.name, .addresses(["127.0.0.1"]))
                // Connected, with nothing to give it yet: what the gateway's readiness must not count.
                #expect(await eventually { gateway.client.workerCount == 1 && gateway.client.servingWorkerCount == 0 })
                #expect(await announces(4, on: refresh))
                #expect(await eventually { gateway.client.servingWorkerCount == 1 })
                let answer = try await gateway.client.verify(request("r-1", deadline: .seconds(10)))
                #expect(answer.requestID == "r-1")
            }
        }
    }

    @Test func aGatewayThatUsedUpItsCreditsGetsWhatTheIdleRefreshPoolDoesNotUse() async throws {
        // The refresh pool, as a bare ROUTER that reads what its worker announces.
        let refresh = try ZMQSocket(context: zmq, type: .router)
        try refresh.bind("tcp://127.0.0.1:*")
        let refreshEndpoint = try refresh.lastEndpoint()
        let built = Latest<PoolWorker>()
        resolver.set(Self.name, .addresses(["127.0.0.1"]))
        try await withGateway { gateway in
            // The gateway's worker is built last: `built` holds it.
            let discovery = discovery(
                endpoints: [refreshEndpoint, "tcp://\(Self.name):\(gateway.port)"], maxInFlight: 256,
                gatewayDeadAfter: .milliseconds(1_500), built: built)
            try await withRunning(discovery) {
                // Joined in one round, the two pools start even.
                #expect(await announces(128, on: refresh))
                #expect(await eventually { gateway.client.workerCount == 1 })
                let held = hold(256, through: gateway)
                // The idle refresh pool keeps the minimum; the gateway gets the rest...
                #expect(await announces(CapacitySplit.minimumDemand, on: refresh))
                #expect(await eventually { handler.holding == 256 - CapacitySplit.minimumDemand })
                // ...and no more, heartbeats later (the silent refresh router is told READY again).
                #expect(await announces(CapacitySplit.minimumDemand, on: refresh))
                #expect(handler.holding == 256 - CapacitySplit.minimumDemand)
                #expect(gateway.client.inFlightCount == 256 - CapacitySplit.minimumDemand)

                // The gateway dies and leaves DNS: its worker drops what it held, and the refresh
                // pool alone has the whole bound again.
                try await stop(gateway, holding: held, worker: built)
                #expect(await announces(256, on: refresh))
            }
        }
    }

    @Test func sharesChangingEveryMillisecondNeverGrantASlotTwice() async throws {
        // A beat every millisecond: the gateway's share grows READY by READY while its requests
        // stream to the worker, so READYs cross requests on the wire. Were the credits set to what
        // the worker had free when it wrote each READY, the requests crossing it would be granted
        // twice, and the worker would hold more than its share of the bound.
        let refresh = try ZMQSocket(context: zmq, type: .router)
        try refresh.bind("tcp://127.0.0.1:*")
        let refreshEndpoint = try refresh.lastEndpoint()
        let built = Latest<PoolWorker>()
        resolver.set(Self.name, .addresses(["127.0.0.1"]))
        try await withGateway { gateway in
            let discovery = discovery(
                endpoints: [refreshEndpoint, "tcp://\(Self.name):\(gateway.port)"], maxInFlight: 1_024,
                gatewayDeadAfter: .milliseconds(1_500), heartbeatInterval: .milliseconds(1), built: built)
            try await withRunning(discovery) {
                #expect(await eventually { gateway.client.workerCount == 1 })
                let held = hold(1_024, through: gateway)
                let share = 1_024 - CapacitySplit.minimumDemand
                #expect(await eventually { gateway.client.inFlightCount == share })
                // Hundreds of beats later, still exactly the share: nothing was granted twice.
                try await Task.sleep(for: .milliseconds(300))
                #expect(handler.holding == share)
                #expect(gateway.client.inFlightCount == share)
                try await stop(gateway, holding: held, worker: built)
            }
        }
    }

    @Test func aPoolNobodyBindsStillReportsItsUseSoTheOthersGetWhatItDoesNotNeed() async throws {
        // The refresh pool's endpoint, which no ledger binds: its worker's DEALER queues what it sends
        // there up to its high-water mark (4 messages here, libzmq's 1,000 in production), then would wait.
        let unbound = "ipc://\(NSTemporaryDirectory())storekeeper-unbound-\(UInt32.random(in: 0...UInt32.max)).sock"
        let built = Latest<PoolWorker>()
        let unboundWorker = Latest<PoolWorker>()
        resolver.set(Self.name, .addresses(["127.0.0.1"]))
        try await withGateway { gateway in
            let discovery = PoolDiscovery(
                endpoints: [unbound, "tcp://\(Self.name):\(gateway.port)"], maxInFlight: 256, resolver: resolver,
                resolveInterval: .milliseconds(50), logger: quietLogger
            ) { [zmq, handler] endpoint, capacity in
                let isUnbound = endpoint == unbound
                let worker = PoolWorker(
                    context: zmq, endpoint: endpoint, capacity: capacity, gatewayDeadAfter: .milliseconds(1_500),
                    heartbeatInterval: .seconds(1), sendHighWaterMark: isUnbound ? 4 : nil, logger: quietLogger,
                    handler: handler.handle)
                (isUnbound ? unboundWorker : built).set(worker)
                return worker
            }
            try await withRunning(discovery) {
                #expect(await eventually { gateway.client.workerCount == 1 })
                // Its queue is full: a worker that waited to send would report nothing from here on.
                #expect(await eventually { (unboundWorker.current?.skippedHeartbeats ?? 0) >= 2 })
                let held = hold(256, through: gateway)
                // The unbound pool is idle and keeps the minimum; the gateway gets the rest.
                #expect(await eventually { handler.holding == 256 - CapacitySplit.minimumDemand })
                #expect(await eventually { gateway.client.inFlightCount == 256 - CapacitySplit.minimumDemand })
                try await stop(gateway, holding: held, worker: built)
            }
        }
    }

    /// `count` requests through `gateway` that the handler holds until they are cancelled.
    func hold(_ count: Int, through gateway: Gateway) -> [Task<Envelope, any Error>] {
        (0..<count).map { index in
            Task { try await gateway.client.verify(request("hold-\(index)", deadline: .seconds(60))) }
        }
    }

    /// The gateway dies and leaves DNS. Its worker, the one `worker` holds, has its gateway go
    /// silent, then leaves and drops what it held (all `held` but the minimum) instead of waiting.
    func stop(_ gateway: Gateway, holding held: [Task<Envelope, any Error>], worker: Latest<PoolWorker>) async throws {
        await gateway.stop()
        for task in held { _ = await task.result }
        let worker = try #require(worker.current)
        #expect(await eventually { worker.gatewayIsSilent })
        resolver.set(Self.name, .addresses([]))
        #expect(await eventually { handler.cancelled == held.count - CapacitySplit.minimumDemand })
    }

    /// Whether a READY announcing `capacity` reaches the router in time (other messages are skipped:
    /// heartbeats, and a READY a silent router gets again every few seconds).
    func announces(_ capacity: Int, on router: ZMQSocket, within limit: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            guard let message = try? router.receive(dontWait: true) else {
                try? await Task.sleep(for: .milliseconds(10))
                continue
            }
            if let (command, body) = PoolFrame.decode(message.dropFirst()), command == .ready,
                body.first.flatMap(PoolFrame.uint32) == UInt32(capacity)
            {
                return true
            }
        }
        return false
    }
}
