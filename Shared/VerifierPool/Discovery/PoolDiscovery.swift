import Logging
import ServiceLifecycle
import Synchronization

/// The verifier's side of every pool it serves (the gateways', and the
/// ledger's refresh pool): one `PoolWorker` per address, following DNS.
///
/// A `tcp://NAME:PORT` endpoint is looked up every `resolveInterval` (see
/// `PoolDirectory` for the rules): an address that appears gets a worker at
/// once, one that vanishes has its worker leave (`PoolWorker.leave()`), so a
/// gateway started later is served within one interval without restarting a
/// verifier. Gateways keep binding; nothing else changes for them.
///
/// The verifier's in-flight bound is split over the workers as they use it
/// (`CapacitySplit`), and each worker announces its new share within a
/// heartbeat.
///
/// Workers run as children of this service. On graceful shutdown the lookups
/// stop and every worker leaves as it always has; `run()` returns when the
/// last one has.
public final class PoolDiscovery: Service, Sendable {
    /// How often names are looked up again: short enough that a new gateway
    /// gets verifiers within seconds of starting (its readiness waits for
    /// them), long enough to cost a DNS server nothing. Docker's and
    /// Kubernetes' DNS answer from the live set of containers, without TTL
    /// games.
    public static let resolveInterval: Duration = .seconds(5)

    /// Builds the worker for one concrete endpoint (`tcp://ADDRESS:PORT`, or a fixed endpoint as given).
    public typealias MakeWorker = @Sendable (_ endpoint: String, _ capacity: PoolCapacity) -> PoolWorker

    private let endpoints: [String]
    private let capacity: VerifierCapacity
    private let resolver: any AddressResolver
    private let interval: Duration
    private let logger: Logger
    private let makeWorker: MakeWorker
    /// Workers not asked to leave, by endpoint.
    private let active = Mutex<[String: PoolWorker]>([:])
    private let running = Atomic(0)
    private let rounds = Atomic(0)
    private let maxInFlight: Int

    /// - Parameters:
    ///   - endpoints: the pools as configured (`STOREKEEPER_VERIFIER_ENDPOINT`'s list and the refresh endpoint).
    ///   - maxInFlight: the verifier's bound on requests in flight, shared by the workers.
    public init(
        endpoints: [String], maxInFlight: Int, resolver: any AddressResolver = SystemResolver(),
        resolveInterval: Duration = PoolDiscovery.resolveInterval, logger: Logger,
        makeWorker: @escaping MakeWorker
    ) {
        self.endpoints = endpoints
        self.maxInFlight = maxInFlight
        self.capacity = VerifierCapacity(maxInFlight: maxInFlight)
        self.resolver = resolver
        self.interval = resolveInterval
        self.logger = logger
        self.makeWorker = makeWorker
    }

    /// The endpoints served now, sorted (workers still leaving are not counted).
    public var connectedEndpoints: [String] { active.withLock { $0.keys.sorted() } }

    /// Workers still running, leaving ones included.
    public var runningWorkerCount: Int { running.load(ordering: .relaxed) }

    /// Rounds of lookups carried out so far.
    public var completedRounds: Int { rounds.load(ordering: .relaxed) }

    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            var directory = PoolDirectory(endpoints: endpoints)
            var problems: [String: Resolution] = [:]
            while true {
                let names = directory.names
                let answers = await cancelWhenGracefulShutdown { await self.lookUp(names) }
                if Task.isShuttingDownGracefully || Task.isCancelled { break }
                report(answers, against: &problems)
                let changes = directory.update(answers)
                apply(changes, in: &group)
                rounds.add(1, ordering: .relaxed)
                // Fixed endpoints only: nothing will ever change.
                if names.isEmpty { break }
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
                } catch {
                    break
                }
            }
        }
    }

    /// One lookup per name, one after the other (a verifier is given a name or two).
    private func lookUp(_ names: [String]) async -> [String: Resolution] {
        var answers: [String: Resolution] = [:]
        for name in names { answers[name] = await resolver.resolve(name) }
        return answers
    }

    /// Retires and starts workers. The new ones all join the capacity before
    /// any takes its first share (when it runs), so the pools of one round
    /// start even, but for a pool retiring in the same round: it holds its
    /// part until its worker has stopped.
    private func apply(_ changes: [PoolDirectory.Change], in group: inout ThrowingDiscardingTaskGroup<any Error>) {
        var joining: [(endpoint: String, capacity: PoolCapacity)] = []
        for change in changes {
            switch change {
            case .retire(let endpoint):
                logger.info("pool address gone from DNS; its worker leaves", metadata: ["pool.endpoint": "\(endpoint)"])
                active.withLock { $0.removeValue(forKey: endpoint) }?.leave()
            case .connect(let endpoint):
                joining.append((endpoint, capacity.join()))
            }
        }
        let pools = active.withLock { $0.count } + joining.count
        if !joining.isEmpty, pools > maxInFlight {
            // A pool with no share of the bound never gets a request to show it needs one.
            logger.warning(
                "more pools than requests in flight: some get none, and their gateways stay unready",
                metadata: ["pools": "\(pools)", "verifier.max_in_flight": "\(maxInFlight)"])
        }
        for (endpoint, capacity) in joining {
            let worker = makeWorker(endpoint, capacity)
            logger.info("connecting to a pool", metadata: ["pool.endpoint": "\(endpoint)"])
            active.withLock { $0[endpoint] = worker }
            running.add(1, ordering: .relaxed)
            group.addTask {
                defer { self.running.subtract(1, ordering: .relaxed) }
                try await worker.run()
            }
        }
    }

    /// Logs a name whose lookup failed or found nothing, once until that changes.
    private func report(_ answers: [String: Resolution], against problems: inout [String: Resolution]) {
        for (name, answer) in answers.sorted(by: { $0.key < $1.key }) {
            let problem: Resolution?
            switch answer {
            case .addresses(let addresses): problem = addresses.isEmpty ? answer : nil
            case .failed: problem = answer
            }
            guard problems[name] != problem else { continue }
            problems[name] = problem
            switch problem {
            case .failed(let reason)?:
                logger.warning(
                    "pool name lookup failed; keeping its addresses", metadata: ["pool.name": "\(name)", "error": "\(reason)"])
            case .addresses?:
                logger.warning("pool name resolves to no address", metadata: ["pool.name": "\(name)"])
            case nil:
                logger.info("pool name resolves again", metadata: ["pool.name": "\(name)"])
            }
        }
    }
}
