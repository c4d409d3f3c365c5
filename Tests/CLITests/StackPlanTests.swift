import AppleJWS
import Testing

@testable import StorekeeperCLI
@testable import StorekeeperCore

@Suite struct StackPlanTests {
    private func plan(
        _ variables: [String: String], simulator: Bool, verifiers: Int = 2, scale: StackPlan.Scale? = nil
    ) throws -> StackPlan {
        StackPlan(
            configuration: try StorekeeperConfiguration(reader: EnvironmentReader(variables)),
            scale: scale ?? .init(verifiers: verifiers), withSimulator: simulator, demoSecret: "demo-secret",
            simulatorRootFile: "/tmp/sim-root.pem", simulatorKeyFile: "/tmp/sim-key.p8")
    }

    @Test func aScaledStackGivesEachLedgerAndGatewayItsOwnPortsAndConnectsEveryoneToEveryone() throws {
        let url = "postgres://sk:pw@127.0.0.1:5432/sk"
        let plan = try plan(
            [:], simulator: true, scale: .init(verifiers: 3, ledgers: 2, gateways: 2, databaseURL: url))
        #expect(
            plan.members.map(\.name) == [
                "sim", "ledger-1", "ledger-2", "verifier-1", "verifier-2", "verifier-3", "gateway-1", "gateway-2",
            ])
        let ledgers = plan.members.filter { $0.executable == "storekeeper-ledger" }
        #expect(ledgers.map { $0.environment["STOREKEEPER_LEDGER_ENDPOINT"] } == ["tcp://127.0.0.1:7422", "tcp://127.0.0.1:7522"])
        #expect(ledgers.allSatisfy { $0.environment["STOREKEEPER_DATABASE_URL"] == url })
        #expect(ledgers.map { $0.environment["STOREKEEPER_REFRESH_PER_MINUTE"] } == [nil, "0"], "one ledger refreshes")
        #expect(
            ledgers.map { $0.environment["STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS"] } == [nil, "0"],
            "one ledger catches notifications up (its refresh pool is the only one bound)")
        let gateways = plan.members.filter { $0.executable == "storekeeper-gateway" }
        #expect(gateways.map { $0.environment["STOREKEEPER_HTTP_ADDR"] } == ["127.0.0.1:8080", "127.0.0.1:8081"])
        #expect(gateways.map { $0.environment["STOREKEEPER_VERIFIER_ENDPOINT"] } == ["tcp://127.0.0.1:7421", "tcp://127.0.0.1:7521"])
        #expect(gateways.allSatisfy { $0.environment["STOREKEEPER_LEDGER_ENDPOINT"] == "tcp://127.0.0.1:7422,tcp://127.0.0.1:7522" })
        for verifier in plan.members where verifier.executable == "storekeeper-verifier" {
            #expect(verifier.environment["STOREKEEPER_VERIFIER_ENDPOINT"] == "tcp://127.0.0.1:7421,tcp://127.0.0.1:7521")
            // The gateways' list exactly, or the verifiers would never hand a receipt to a ledger.
            #expect(verifier.environment["STOREKEEPER_LEDGER_ENDPOINT"] == "tcp://127.0.0.1:7422,tcp://127.0.0.1:7522")
        }
        #expect(plan.gatewayURLs == ["http://127.0.0.1:8080", "http://127.0.0.1:8081"])
    }

    @Test func anUnscaledStackSetsNoEndpointOfItsOwn() throws {
        let plan = try plan([:], simulator: false)
        #expect(plan.members.allSatisfy { $0.environment["STOREKEEPER_LEDGER_ENDPOINT"] == nil })
        #expect(plan.members.map(\.name) == ["ledger", "verifier-1", "verifier-2", "gateway"])
    }

    @Test func startsSimulatorFirstAndGatewayLastAndPointsVerifiersAtTheSimulator() throws {
        let plan = try plan(
            ["STOREKEEPER_SIM_ADDR": "127.0.0.1:9555", "STOREKEEPER_HTTP_ADDR": "127.0.0.1:9556"], simulator: true,
            verifiers: 3)
        #expect(plan.members.map(\.name) == ["sim", "ledger", "verifier-1", "verifier-2", "verifier-3", "gateway"])
        for verifier in plan.members where verifier.executable == "storekeeper-verifier" {
            #expect(verifier.environment["STOREKEEPER_APPLE_PRODUCTION_URL"] == "http://127.0.0.1:9555/production/verifyReceipt")
            #expect(verifier.environment["STOREKEEPER_APPLE_SANDBOX_URL"] == "http://127.0.0.1:9555/sandbox/verifyReceipt")
            #expect(verifier.environment["STOREKEEPER_JWS_EXTRA_ROOTS"] == "/tmp/sim-root.pem")
        }
        // Only the verifiers check signed data.
        #expect(plan.members.filter { $0.environment["STOREKEEPER_JWS_EXTRA_ROOTS"] != nil }.count == 3)
        #expect(plan.gatewayURL == "http://127.0.0.1:9556")
        #expect(plan.members[0].environment["STOREKEEPER_SIM_NOTIFICATION_URL"] == "http://127.0.0.1:9556/v1/notifications/apple")
    }

    @Test func withTheSimulatorAndNoSecretConfiguredTheDemoSecretIsSharedByThoseThatCheckIt() throws {
        let plan = try plan([:], simulator: true)
        let holders = plan.members.filter { $0.environment["STOREKEEPER_APPLE_SHARED_SECRET"] == "demo-secret" }
        #expect(holders.map(\.name) == ["sim", "verifier-1", "verifier-2", "gateway"])
        // And the simulator's bundle, which signed data needs.
        let bundled = plan.members.filter { $0.environment["STOREKEEPER_BUNDLE_IDS"] == "com.example.storekeeper" }
        #expect(bundled.map(\.name) == ["sim", "verifier-1", "verifier-2", "gateway"])
        let mine = try self.plan(["STOREKEEPER_BUNDLE_IDS": "com.mine.app"], simulator: true)
        #expect(mine.members.allSatisfy { $0.environment["STOREKEEPER_BUNDLE_IDS"] == nil })
    }

    @Test func aConfiguredSecretAndNotificationURLAreLeftAlone() throws {
        let plan = try plan(
            ["STOREKEEPER_APPLE_SHARED_SECRET": "mine", "STOREKEEPER_SIM_NOTIFICATION_URL": "http://127.0.0.1:1/n"],
            simulator: true)
        #expect(plan.members.allSatisfy { $0.environment["STOREKEEPER_APPLE_SHARED_SECRET"] == nil })
        #expect(plan.members[0].environment["STOREKEEPER_SIM_NOTIFICATION_URL"] == nil)
        let rooted = try self.plan(["STOREKEEPER_JWS_EXTRA_ROOTS": "/etc/mine.pem"], simulator: true)
        #expect(rooted.members.allSatisfy { $0.environment["STOREKEEPER_JWS_EXTRA_ROOTS"] == nil })
    }

    @Test func aWildcardListenAddressIsReachedOnLoopback() throws {
        #expect(try plan(["STOREKEEPER_HTTP_ADDR": "0.0.0.0:8081"], simulator: false).gatewayURL == "http://127.0.0.1:8081")
    }

    @Test func withoutTheSimulatorTheVerifiersKeepTheConfiguredAppleURLs() throws {
        let plan = try plan([:], simulator: false)
        #expect(plan.members.map(\.executable) == [
            "storekeeper-ledger", "storekeeper-verifier", "storekeeper-verifier", "storekeeper-gateway",
        ])
        #expect(plan.members.allSatisfy { $0.environment.isEmpty })
    }

    @Test func withTheSimulatorTheVerifiersServerAPIIsTheSimulatorsWithItsTestKey() throws {
        let simulated = try plan(["STOREKEEPER_SIM_ADDR": "127.0.0.1:9555"], simulator: true)
        for verifier in simulated.members where verifier.executable == "storekeeper-verifier" {
            #expect(verifier.environment["STOREKEEPER_APPLE_API_PRODUCTION_URL"] == "http://127.0.0.1:9555/production")
            #expect(verifier.environment["STOREKEEPER_APPLE_API_SANDBOX_URL"] == "http://127.0.0.1:9555/sandbox")
            #expect(verifier.environment["STOREKEEPER_APPLE_KEY_ID"] == SimulatorServerAPIKey.keyID)
            #expect(verifier.environment["STOREKEEPER_APPLE_ISSUER_ID"] == SimulatorServerAPIKey.issuerID)
            #expect(verifier.environment["STOREKEEPER_APPLE_PRIVATE_KEY_FILE"] == "/tmp/sim-key.p8")
        }
        for member in simulated.members where member.executable != "storekeeper-ledger" {
            #expect(member.environment["STOREKEEPER_APPLE_APP_ID"] == String(SimulatorServerAPIKey.appAppleID), "\(member.name)")
        }
        let gateway = try #require(simulated.members.first { $0.executable == "storekeeper-gateway" })
        #expect(gateway.environment["STOREKEEPER_APPLE_PRIVATE_KEY_FILE"] == nil, "only the verifiers read the key")
        let ownApp = try plan(["STOREKEEPER_APPLE_APP_ID": "777"], simulator: true)
        #expect(ownApp.members.allSatisfy { $0.environment["STOREKEEPER_APPLE_APP_ID"] == nil }, "the configured one stands")
        let noSimulator = try plan([:], simulator: false)
        #expect(noSimulator.members.allSatisfy { $0.environment["STOREKEEPER_APPLE_KEY_ID"] == nil })
    }
}

@Suite struct RestartBackoffTests {
    @Test func doublesForACrashLoopUpToTheLongestAndStartsOverAfterAStableRun() {
        var backoff = RestartBackoff()
        let quick = Duration.milliseconds(50)
        let delays = (0..<8).map { _ in backoff.delay(afterRunningFor: quick) }
        #expect(delays == [.milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10)])
        #expect(backoff.delay(afterRunningFor: RestartBackoff.stableAfter) == RestartBackoff.first)
    }
}
