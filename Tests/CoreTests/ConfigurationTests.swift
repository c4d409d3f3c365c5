import Foundation
import Testing

@testable import StorekeeperCore

@Suite struct ConfigurationTests {
    @Test func defaultsMatchTheSpec() throws {
        let configuration = try StorekeeperConfiguration(reader: EnvironmentReader([:]))
        #expect(configuration.apple.productionURL == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(configuration.apple.sandboxURL == "https://sandbox.itunes.apple.com/verifyReceipt")
        #expect(configuration.apple.sharedSecret == nil)
        #expect(configuration.apple.bundleIDs.isEmpty)
        #expect(configuration.apple.verifyDeadline == .seconds(30))
        #expect(configuration.gateway.httpAddress == SocketAddress("127.0.0.1:8080"))
        #expect(configuration.gateway.apiKeys.isEmpty)
        #expect(configuration.gateway.maxBodyBytes == 1_048_576)
        #expect(configuration.gateway.httpThreads == 1)
        #expect(configuration.ledger.bindingPolicy == .transfer)
        #expect(configuration.ledger.dataDirectory == "./data")
        #expect(configuration.ledger.eventRetention == .seconds(7 * 24 * 3_600))
        #expect(configuration.ledger.notificationCatchUp == .seconds(300))
        #expect(configuration.ledger.sendConsumptionInfo == false, "consumption data leaves only when the operator says so")
        #expect(configuration.endpoints.events == "tcp://127.0.0.1:7420")
        #expect(configuration.log == LogSettings(level: .info, format: .text))
        #expect(configuration.metricsAddress == nil)
        #expect(configuration.apple.caFile == nil, "Apple's endpoints are checked against the system's certificates")
        #expect(configuration.simulator.tlsAddress == nil)
    }

    @Test func readsEveryVariable() throws {
        let configuration = try StorekeeperConfiguration(
            reader: EnvironmentReader([
                "STOREKEEPER_APPLE_PRODUCTION_URL": "http://127.0.0.1:9000/production/verifyReceipt",
                "STOREKEEPER_APPLE_SANDBOX_URL": "http://127.0.0.1:9000/sandbox/verifyReceipt",
                "STOREKEEPER_APPLE_SHARED_SECRET": "0123456789abcdef",
                "STOREKEEPER_BUNDLE_IDS": " com.example.app, ,com.example.other,com.example.app ",
                "STOREKEEPER_HTTP_ADDR": "0.0.0.0:9999",
                "STOREKEEPER_API_KEYS": "key-one-1234,key-two-5678",
                "STOREKEEPER_BINDING_POLICY": "KEEP",
                "STOREKEEPER_DATA_DIR": "/var/lib/storekeeper",
                "STOREKEEPER_EVENTS_ENDPOINT": "ipc:///tmp/sk-events",
                "STOREKEEPER_VERIFY_DEADLINE_MS": "12000",
                "STOREKEEPER_LOG_LEVEL": "debug",
                "STOREKEEPER_LOG_FORMAT": "json",
                "STOREKEEPER_METRICS_ADDR": "[::1]:9100",
                "STOREKEEPER_EVENT_RETENTION_HOURS": "24",
                "STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS": "60",
                "STOREKEEPER_SEND_CONSUMPTION_INFO": "true",
                "STOREKEEPER_APPLE_CA_FILE": "/tmp/sim-tls.pem",
                "STOREKEEPER_SIM_TLS_ADDR": "127.0.0.1:8091",
                "STOREKEEPER_HTTP_THREADS": "4",
            ]))
        #expect(configuration.apple.productionURL == "http://127.0.0.1:9000/production/verifyReceipt")
        #expect(configuration.apple.sharedSecret?.revealed == "0123456789abcdef")
        #expect(configuration.apple.bundleIDs == ["com.example.app", "com.example.other"])
        #expect(configuration.gateway.httpAddress == SocketAddress("0.0.0.0:9999"))
        #expect(configuration.gateway.apiKeys.map(\.revealed) == ["key-one-1234", "key-two-5678"])
        #expect(configuration.ledger.bindingPolicy == .keep)
        #expect(configuration.ledger.dataDirectory == "/var/lib/storekeeper")
        #expect(configuration.ledger.eventRetention == .seconds(24 * 3_600))
        #expect(configuration.ledger.notificationCatchUp == .seconds(60))
        #expect(configuration.ledger.sendConsumptionInfo)
        #expect(configuration.apple.caFile == "/tmp/sim-tls.pem")
        #expect(configuration.simulator.tlsAddress == SocketAddress("127.0.0.1:8091"))
        #expect(configuration.gateway.httpThreads == 4)
        let off = try StorekeeperConfiguration(reader: EnvironmentReader(["STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS": "0"]))
        #expect(off.ledger.notificationCatchUp == nil)
        #expect(configuration.endpoints.events == "ipc:///tmp/sk-events")
        #expect(configuration.apple.verifyDeadline == .milliseconds(12_000))
        #expect(configuration.log == LogSettings(level: .debug, format: .json))
        #expect(configuration.metricsAddress?.host == "::1")
        #expect(configuration.metricsAddress?.port == 9100)
        #expect(configuration.secrets.count == 3)
    }

    @Test(arguments: [
        ("STOREKEEPER_APPLE_PRODUCTION_URL", "buy.itunes.apple.com/verifyReceipt"),
        ("STOREKEEPER_APPLE_SANDBOX_URL", "ftp://sandbox.itunes.apple.com"),
        ("STOREKEEPER_HTTP_ADDR", "8080"),
        ("STOREKEEPER_HTTP_ADDR", "127.0.0.1:70000"),
        ("STOREKEEPER_BINDING_POLICY", "share"),
        ("STOREKEEPER_EVENTS_ENDPOINT", "127.0.0.1:7420"),
        ("STOREKEEPER_VERIFIER_ENDPOINT", "tcp://127.0.0.1"),
        ("STOREKEEPER_VERIFY_DEADLINE_MS", "thirty"),
        ("STOREKEEPER_VERIFY_DEADLINE_MS", "0"),
        ("STOREKEEPER_MAX_BODY_BYTES", "-1"),
        ("STOREKEEPER_LOG_LEVEL", "loud"),
        ("STOREKEEPER_LOG_FORMAT", "xml"),
        ("STOREKEEPER_METRICS_ADDR", "nowhere"),
        ("STOREKEEPER_SIM_NOTIFICATION_URL", "not a url"),
        ("STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS", "-1"),
        ("STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS", "86401"),
        ("STOREKEEPER_SEND_CONSUMPTION_INFO", "maybe"),
        ("STOREKEEPER_SIM_TLS_ADDR", "8091"),
        ("STOREKEEPER_HTTP_THREADS", "0"),
        ("STOREKEEPER_HTTP_THREADS", "two"),
        ("STOREKEEPER_HTTP_THREADS", "257"),
    ])
    func aBadValueNamesItsVariable(variable: String, value: String) {
        #expect {
            try StorekeeperConfiguration(reader: EnvironmentReader([variable: value]))
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.variable == variable && error.description.hasPrefix(variable + ":")
        }
    }

    @Test func twoEndpointsOnOneAddressAreRefused() {
        #expect(throws: ConfigurationError.self) {
            try StorekeeperConfiguration(
                reader: EnvironmentReader(["STOREKEEPER_LEDGER_ENDPOINT": "tcp://127.0.0.1:7420"]))
        }
    }

    @Test func connectTimeoutMayNotExceedTheAttemptTimeout() {
        #expect(throws: ConfigurationError(
            variable: "STOREKEEPER_APPLE_CONNECT_TIMEOUT_MS", reason: "must not exceed STOREKEEPER_APPLE_ATTEMPT_TIMEOUT_MS")
        ) {
            try AppleSettings(reader: EnvironmentReader([
                "STOREKEEPER_APPLE_CONNECT_TIMEOUT_MS": "9000", "STOREKEEPER_APPLE_ATTEMPT_TIMEOUT_MS": "1000",
            ]))
        }
    }

    @Test func emptyValuesCountAsUnset() throws {
        let configuration = try StorekeeperConfiguration(
            reader: EnvironmentReader(["STOREKEEPER_API_KEYS": "", "STOREKEEPER_HTTP_ADDR": "  "]))
        #expect(configuration.gateway.apiKeys.isEmpty)
        #expect(configuration.gateway.httpAddress.port == 8080)
    }

    @Test func unknownStorekeeperVariablesAreReported() throws {
        let configuration = try StorekeeperConfiguration(
            reader: EnvironmentReader(["STOREKEEPER_BINDING_POLCY": "keep", "HOME": "/root"]))
        #expect(configuration.unknownVariables == ["STOREKEEPER_BINDING_POLCY"])
    }

    @Test func aSecretNeverPrintsItsValue() throws {
        let configuration = try StorekeeperConfiguration(
            reader: EnvironmentReader([
                "STOREKEEPER_APPLE_SHARED_SECRET": "s3cr3t-shared", "STOREKEEPER_API_KEYS": "sk-live-abcdef",
            ]))
        let printed = "\(configuration) \(String(reflecting: configuration)) \(configuration.apple) \(configuration.gateway)"
        #expect(!printed.contains("s3cr3t-shared"))
        #expect(!printed.contains("sk-live-abcdef"))
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("s3cr3t-shared"))
        #expect(!dumped.contains("sk-live-abcdef"))
    }

    @Test func constantTimeComparison() {
        let key = Array("sk-live-abcdef".utf8)
        #expect(ConstantTime.equal(key, Array("sk-live-abcdef".utf8)))
        #expect(!ConstantTime.equal(key, Array("sk-live-abcdeg".utf8)))
        #expect(!ConstantTime.equal(key, Array("tk-live-abcdef".utf8)))
        #expect(!ConstantTime.equal(key, Array("sk-live-abcde".utf8)))
        #expect(!ConstantTime.equal(key, []))
        #expect(ConstantTime.equal([UInt8](), []))
    }

    @Test func everyVariableIsDocumented() {
        for variable in ConfigurationVariable.allCases {
            #expect(variable.rawValue.hasPrefix("STOREKEEPER_"))
            #expect(!variable.meaning.isEmpty)
        }
    }
}

@Suite struct ConfigurationDocumentationTests {
    /// The README's table is what operators read: it must list every variable the code reads.
    @Test func theReadmeDocumentsEveryVariable() throws {
        let readme = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        for variable in ConfigurationVariable.allCases {
            #expect(text.contains("`\(variable.rawValue)` | `\(variable.defaultValue ?? "none")`")
                || text.contains("`\(variable.rawValue)` | none"), "README misses \(variable.rawValue)")
        }
    }
}
