import AppleJWS
import Crypto
import Foundation
import StorekeeperCore
import Testing

@testable import Verifier

/// The `.p8` key: read and checked at start-up; every mistake names the
/// variable and the file, and nothing ever shows the key.
@Suite struct ServerAPISigningKeyTests {
    static let variable = "STOREKEEPER_APPLE_PRIVATE_KEY_FILE"

    func file(_ contents: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString).p8").path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aP256PKCS8KeyLoads() throws {
        let path = try file(SimulatorServerAPIKey.privateKeyPEM)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let key = try ServerAPISigningKey.load(file: path)
        let expected = try P256.Signing.PrivateKey(pemRepresentation: SimulatorServerAPIKey.privateKeyPEM)
        #expect(key.publicKey.rawRepresentation == expected.publicKey.rawRepresentation)
        #expect("\(key)" == "<redacted>")
        #expect(String(reflecting: key) == "<redacted>")
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains("BEGIN"))
    }

    @Test func aMissingFileNamesTheVariableAndTheFile() {
        #expect {
            try ServerAPISigningKey.load(file: "/nonexistent/AuthKey_X.p8")
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.variable == Self.variable && error.reason.contains("/nonexistent/AuthKey_X.p8")
        }
    }

    @Test func aKeyOnAnotherCurveIsRefusedWithoutShowingIt() throws {
        let pem = P384.Signing.PrivateKey().pemRepresentation
        let path = try file(pem)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            try ServerAPISigningKey.load(file: path)
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            let body = pem.split(separator: "\n")[1]
            return error.variable == Self.variable && error.reason.contains("another curve")
                && !error.description.contains(body)
        }
    }

    @Test(arguments: ["not a key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", ""])
    func somethingElseIsRefused(_ contents: String) throws {
        let path = try file(contents)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            try ServerAPISigningKey.load(file: path)
        } throws: { error in
            (error as? ConfigurationError)?.variable == Self.variable
                && !((error as? ConfigurationError)?.description.contains("AAAA") ?? true)
        }
    }

    @Test func theClientConfigurationLoadsTheKeyOnlyWhenTheAPIIsConfigured() throws {
        let off = try StorekeeperConfiguration(reader: EnvironmentReader(["STOREKEEPER_BUNDLE_IDS": "com.example.app"]))
        #expect(try ServerAPIClientConfiguration.load(off) == nil)
        let path = try file(SimulatorServerAPIKey.privateKeyPEM)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let on = try StorekeeperConfiguration(
            reader: EnvironmentReader([
                "STOREKEEPER_BUNDLE_IDS": "com.example.app,com.example.other", "STOREKEEPER_APPLE_ISSUER_ID": "issuer",
                "STOREKEEPER_APPLE_KEY_ID": "KEY1234567", "STOREKEEPER_APPLE_PRIVATE_KEY_FILE": path,
                "STOREKEEPER_APPLE_APP_ID": "1234567890", "STOREKEEPER_VERIFY_DEADLINE_MS": "9000",
            ]))
        let configuration = try #require(try ServerAPIClientConfiguration.load(on))
        #expect(configuration.credentials.bundleID == "com.example.app")
        #expect(configuration.credentials.keyID == "KEY1234567")
        #expect(configuration.appAppleID == 1_234_567_890)
        #expect(configuration.productionURL == "https://api.storekit.itunes.apple.com")
        #expect(configuration.sandboxURL == "https://api.storekit-sandbox.itunes.apple.com")
        #expect(configuration.deadline == .seconds(9))
    }
}
