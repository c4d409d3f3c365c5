import AppleJWS
import Foundation
import StorekeeperCore
import Testing

@testable import Verifier

/// Which roots a verifier trusts for signed data: Apple's, plus only what
/// STOREKEEPER_JWS_EXTRA_ROOTS names; a bad file stops it at start.
@Suite struct TrustedRootsTests {
    func settings(_ extraRoots: String?) throws -> AppleSettings {
        var variables: [String: String] = [:]
        if let extraRoots { variables["STOREKEEPER_JWS_EXTRA_ROOTS"] = extraRoots }
        return try AppleSettings(reader: EnvironmentReader(variables))
    }

    func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID().uuidString).pem").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func appleAloneUnlessMoreAreNamed() throws {
        #expect(try VerifierApplication.trustedRoots(try settings(nil)).count == 1)
        let simulator = try file(SimulatorSigningChain.rootCertificatePEM)
        defer { try? FileManager.default.removeItem(atPath: simulator) }
        #expect(try VerifierApplication.trustedRoots(try settings(simulator)).count == 2)
    }

    @Test func aMissingOrBrokenRootFileIsAConfigurationError() throws {
        #expect(throws: ConfigurationError.self) {
            try VerifierApplication.trustedRoots(try settings("/nonexistent/roots.pem"))
        }
        let broken = try file("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
        defer { try? FileManager.default.removeItem(atPath: broken) }
        #expect(throws: ConfigurationError.self) { try VerifierApplication.trustedRoots(try settings(broken)) }
    }

    @Test func anUnreadableAppleCAFileIsAConfigurationError() throws {
        func configuration(_ caFile: String) throws -> StorekeeperConfiguration {
            try StorekeeperConfiguration(
                reader: EnvironmentReader(["STOREKEEPER_BUNDLE_IDS": "com.example.app", "STOREKEEPER_APPLE_CA_FILE": caFile]))
        }
        let error = #expect(throws: ConfigurationError.self) {
            try VerifierApplication.validate(try configuration("/nonexistent/sim-tls.pem"))
        }
        #expect(error?.variable == "STOREKEEPER_APPLE_CA_FILE")
        let simulator = try SimulatorTLSCertificate.writeCertificate()
        defer { try? FileManager.default.removeItem(atPath: simulator) }
        try VerifierApplication.validate(try configuration(simulator))
    }
}
