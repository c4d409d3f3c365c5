import Contracts
import Foundation
import Testing

@testable import Simulator

/// The Server API's injected faults: the queued ones in order, one a call, then the standing one.
@Suite struct ServerAPIFaultPlanTests {
    @Test func queuedFaultsComeFirstThenTheStandingOne() throws {
        let json = #"{"next": ["429", "hang", "401"], "always": "503", "retry_after_seconds": 7}"#
        var plan = try JSONDecoder().decode(ServerAPIFaultPlan.self, from: Data(json.utf8)).validated()
        #expect(plan.retryAfterSeconds == 7)
        #expect((0..<5).map { _ in plan.take() } == [.rateLimited, .hang, .unauthorized, .unavailable, .unavailable])
        var none = try JSONDecoder().decode(ServerAPIFaultPlan.self, from: Data("{}".utf8))
        #expect(none.take() == nil)
    }

    @Test func eachEnvironmentHasItsOwnPlan() {
        let simulator = AppStoreSimulator(bundleID: "com.example.storekeeper", sharedSecret: nil)
        simulator.setServerAPIFaults(ServerAPIFaultPlan(next: [.internalError], retryAfterSeconds: 2), for: .sandbox)
        #expect(simulator.takeServerAPIFault(for: .production) == nil)
        #expect(simulator.takeServerAPIFault(for: .sandbox).map { [$0.0 == .internalError, $0.retryAfterSeconds == 2] } == [true, true])
        #expect(simulator.takeServerAPIFault(for: .sandbox) == nil)
    }

    @Test func aBadPlanNamesItsField() {
        #expect(throws: FaultPlanError(message: "retry_after_seconds must be between 0 and 3600")) {
            try ServerAPIFaultPlan(retryAfterSeconds: 4_000).validated()
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ServerAPIFaultPlan.self, from: Data(#"{"next": ["418"]}"#.utf8))
        }
    }
}
