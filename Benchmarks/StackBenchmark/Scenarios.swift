// The ways the benchmark sends load: closed loop (a fixed number of requests
// in flight, as fast as answers come), open loop (a fixed rate whatever the
// answers do; latency counted from when a request was due, so a stall is not
// hidden), and a burst (everything at once).
import BenchmarkSupport
import Foundation
import NIOCore
import StorekeeperCore
import Synchronization
import TaskLanes

/// Collects outcomes from concurrent senders.
final class SummaryCollector: Sendable {
    private let summary = Mutex(LoadSummary())
    func add(latency: Duration, outcome: String) { summary.withLock { $0.add(latency: latency, outcome: outcome) } }
    var value: LoadSummary { summary.withLock { $0 } }
}

/// A failure below HTTP, named by its case (`ChannelError.connectTimeout`), without payloads.
func transportOutcome(_ error: any Error) -> String {
    let name = String(describing: error).prefix { $0 != "(" }
    return "transport \(type(of: error)).\(name)"
}

/// 200, the API's error code with its status (`503 apple_unavailable`), or the transport error.
func outcome(of result: Result<HTTPExchangeResult, any Error>) -> String {
    switch result {
    case .success(let answer) where answer.status == 200:
        return "200"
    case .success(let answer):
        let object = try? JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView)) as? [String: Any]
        let code = (object?["error"] as? [String: Any])?["code"] as? String ?? "?"
        return "\(answer.status) \(code)"
    case .failure(let error):
        return transportOutcome(error)
    }
}

enum ClosedLoop {
    /// Runs `send(i)` for i in 0..<count with `concurrency` in flight; its summary.
    @discardableResult
    static func run(
        count: Int, concurrency: Int, _ send: @escaping @Sendable (Int) async throws -> String
    ) async throws -> LoadSummary {
        let next = SharedCounter()
        let collector = SummaryCollector()
        let started = ContinuousClock.now
        await withDiscardingTaskGroup { group in
            for _ in 0..<concurrency {
                group.addTask {
                    while true {
                        let index = next.increment()
                        guard index < count else { return }
                        let sent = ContinuousClock.now
                        let result: String
                        do { result = try await send(index) } catch { result = transportOutcome(error) }
                        collector.add(latency: .now - sent, outcome: result)
                    }
                }
            }
        }
        var summary = collector.value
        summary.wall = .now - started
        return summary
    }
}

enum OpenLoop {
    /// Sends `count` requests at `rate` a second, each from its due time on.
    /// The requests run in lanes (`TaskLanes`): one task group holding the
    /// thousands in flight made the generator spend half its CPU detaching them.
    static func run(
        count: Int, rate: Double, _ send: @escaping @Sendable (Int) async -> String
    ) async -> LoadSummary {
        let answers = Mutex([(latency: Duration, outcome: String)?](repeating: nil, count: count))
        let started = ContinuousClock.now
        let perform: @Sendable ((index: Int, due: ContinuousClock.Instant)) async -> Void = { request in
            let outcome = await send(request.index)
            let latency = ContinuousClock.now - request.due
            answers.withLock { $0[request.index] = (latency, outcome) }
        }
        // Nothing in the body throws: `try?` only satisfies the signature.
        try? await withTaskLanes(count: 64, perform: perform) { lanes in
            var index = 0
            while index < count {
                let now = ContinuousClock.now
                // Everything due by now goes out; then sleep a millisecond.
                while index < count, started + .seconds(Double(index) / rate) <= now {
                    lanes.submit((index: index, due: started + .seconds(Double(index) / rate)))
                    index += 1
                }
                try? await EventLoopExecutor.sleep(for: .milliseconds(1))
            }
        }
        // withTaskLanes returned after every request ran, so every slot is filled.
        let byDueOrder = answers.withLock { $0 }.compactMap { $0 }
        var summary = LoadSummary()
        for answer in byDueOrder { summary.add(latency: answer.latency, outcome: answer.outcome) }
        summary.wall = .now - started
        let fifth = max(1, count / 5)
        summary.backlog = Backlog(
            drift: LoadSummary.percentile(0.5, of: summary.latencies.suffix(fifth))
                - LoadSummary.percentile(0.5, of: summary.latencies.prefix(fifth)),
            span: .seconds(Double(count - fifth) / rate))
        return summary
    }
}

/// A counter shared by concurrent tasks.
final class SharedCounter: Sendable {
    private let value = Atomic(0)
    /// Adds `amount`; the value before.
    @discardableResult
    func increment(by amount: Int = 1) -> Int { value.wrappingAdd(amount, ordering: .relaxed).oldValue }
    var current: Int { value.load(ordering: .relaxed) }
}

/// `Result` of an async call.
func attempt(_ body: () async throws -> HTTPExchangeResult) async -> Result<HTTPExchangeResult, any Error> {
    do { return .success(try await body()) } catch { return .failure(error) }
}
