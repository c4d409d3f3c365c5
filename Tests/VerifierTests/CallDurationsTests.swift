import Contracts
import CoreMetrics
import MetricsTestKit
import Synchronization
import Testing

@testable import Verifier

/// Each Apple call's duration lands in its (environment, status) timer, and that
/// timer is made once, not per call.
struct CallDurationsTests {
    @Test func repeatedCallsShareOneTimerAndRecordEachDuration() throws {
        let factory = CountingFactory()
        let metrics = VerifierMetrics(factory: factory)
        metrics.recordCall(environment: .production, outcome: .transportFailure, duration: .milliseconds(5))
        metrics.recordCall(environment: .production, outcome: .transportFailure, duration: .milliseconds(7))
        #expect(factory.timersMade == 1)
        let timer = try factory.test.expectTimer(
            CallDurations.label, [("environment", AppleEnvironment.production.label), ("status", "transport_error")])
        #expect(timer.values == [5_000_000, 7_000_000])
    }

    @Test func eachEnvironmentAndStatusHasATimerOfItsOwn() throws {
        let factory = CountingFactory()
        let metrics = VerifierMetrics(factory: factory)
        metrics.recordCall(environment: .production, outcome: .httpStatus(503, retryAfter: nil), duration: .milliseconds(1))
        metrics.recordCall(environment: .sandbox, outcome: .httpStatus(503, retryAfter: nil), duration: .milliseconds(2))
        metrics.recordCall(environment: .sandbox, outcome: .circuitOpen(retryAfter: .seconds(1)), duration: .milliseconds(3))
        #expect(factory.timersMade == 3)
        let production = try factory.test.expectTimer(
            CallDurations.label, [("environment", AppleEnvironment.production.label), ("status", "http_5xx")])
        let sandbox = try factory.test.expectTimer(
            CallDurations.label, [("environment", AppleEnvironment.sandbox.label), ("status", "http_5xx")])
        let open = try factory.test.expectTimer(
            CallDurations.label, [("environment", AppleEnvironment.sandbox.label), ("status", "circuit_open")])
        #expect((production.values, sandbox.values, open.values) == ([1_000_000], [2_000_000], [3_000_000]))
    }

    @Test func pastTheKeptPairsEveryCallIsStillRecorded() throws {
        let factory = CountingFactory()
        let durations = CallDurations(factory: factory)
        let statuses = (0...CallDurations.kept).map { "status-\($0)" }
        for status in statuses {
            durations.timer(environment: "Production", status: status).recordNanoseconds(1)
        }
        durations.timer(environment: "Production", status: statuses.last!).recordNanoseconds(2)
        #expect(durations.count == CallDurations.kept)
        // The pair past the bound is made again on its second call, and both calls count.
        #expect(factory.timersMade == CallDurations.kept + 2)
        let last = try factory.test.expectTimer(CallDurations.label, [("environment", "Production"), ("status", statuses.last!)])
        #expect(last.values == [1, 2])
    }
}

/// TestMetrics, counting the timers asked of it.
private final class CountingFactory: MetricsFactory, Sendable {
    let test = TestMetrics()
    private let made = Mutex(0)
    var timersMade: Int { made.withLock { $0 } }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        made.withLock { $0 += 1 }
        return test.makeTimer(label: label, dimensions: dimensions)
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        test.makeCounter(label: label, dimensions: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        test.makeFloatingPointCounter(label: label, dimensions: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        test.makeMeter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        test.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func destroyCounter(_ handler: any CounterHandler) { test.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { test.destroyFloatingPointCounter(handler) }
    func destroyMeter(_ handler: any MeterHandler) { test.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { test.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { test.destroyTimer(handler) }
}
