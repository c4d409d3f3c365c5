import Testing

@testable import StorekeeperCLI
@testable import StorekeeperCore

@Suite struct StackPlanTests {
    @Test func startsSimulatorFirstAndGatewayLastAndPointsVerifiersAtTheSimulator() throws {
        let configuration = try StorekeeperConfiguration(
            reader: EnvironmentReader(["STOREKEEPER_SIM_ADDR": "127.0.0.1:9555", "STOREKEEPER_HTTP_ADDR": "127.0.0.1:9556"]))
        let plan = StackPlan(configuration: configuration, verifiers: 3, withSimulator: true)
        #expect(plan.members.map(\.name) == ["sim", "ledger", "verifier-1", "verifier-2", "verifier-3", "gateway"])
        for verifier in plan.members where verifier.executable == "storekeeper-verifier" {
            #expect(verifier.environment["STOREKEEPER_APPLE_PRODUCTION_URL"] == "http://127.0.0.1:9555/production/verifyReceipt")
            #expect(verifier.environment["STOREKEEPER_APPLE_SANDBOX_URL"] == "http://127.0.0.1:9555/sandbox/verifyReceipt")
        }
        #expect(plan.gatewayAddress.port == 9556)
    }

    @Test func withoutTheSimulatorTheVerifiersKeepTheConfiguredAppleURLs() throws {
        let plan = StackPlan(
            configuration: try StorekeeperConfiguration(reader: EnvironmentReader([:])), verifiers: 2,
            withSimulator: false)
        #expect(plan.members.map(\.executable) == [
            "storekeeper-ledger", "storekeeper-verifier", "storekeeper-verifier", "storekeeper-gateway",
        ])
        #expect(plan.members.allSatisfy { $0.environment.isEmpty })
    }
}
