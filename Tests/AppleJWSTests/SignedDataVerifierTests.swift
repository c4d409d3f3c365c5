import AppleJWS
import Foundation
import Testing
import X509

@Suite("SignedDataVerifier: App Store JWS against Apple's chain")
struct SignedDataVerifierTests {
    let apple = SignedDataVerifier(trustedRoots: try! SignedDataVerifier.appleRoots())
    /// Apple's roots on 2025-10-02, when the real notifications were new (their leaf expires in 2027).
    let apple2025 = SignedDataVerifier(
        trustedRoots: try! SignedDataVerifier.appleRoots(), validationTime: { Date(timeIntervalSince1970: 1_759_363_200) })

    @Test("real notifications of 2025 verify, with their nested transaction and renewal info",
          arguments: Fixtures.sessionNotifications)
    func realNotificationsVerify(_ path: String) async throws {
        let jws = try Fixtures.signedPayload(path)
        let payload = try await apple2025.verify(jws)
        let object = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        #expect(object?["notificationUUID"] is String)
        let data = try #require(object?["data"] as? [String: Any])
        for key in ["signedTransactionInfo", "signedRenewalInfo"] {
            let nested = try #require(data[key] as? String)
            _ = try await apple2025.verify(nested)
        }
    }

    @Test func theRepositoryRootIsApplesPublishedRootCAG3() throws {
        let shipped = try Certificate(pemEncoded: AppleRootCertificates.appleRootCAG3PEM)
        let fixture = try Certificate(pemEncoded: try Fixtures.text("certs/apple-real/AppleRootCA-G3.pem"))
        #expect(shipped == fixture)
        #expect(shipped.subject.description.contains("Apple Root CA - G3"))
    }

    @Test("a real payload whose chain has expired is refused now, though its signature is good",
          arguments: ["notifications-v2/real-apple/signed-renewal-info-sandbox-2023.jws", "test-2022"])
    func expiredChainsAreRefused(_ path: String) async throws {
        let jws =
            path == "test-2022"
            ? try Fixtures.signedPayload("notifications-v2/real-apple/test-notification-2022-body.json")
            : try Fixtures.text(path)
        await #expect(throws: SignedDataError.chainUntrusted) { try await apple.verify(jws) }
        // At the time it was signed, the same bytes verify: only the expiry refused it.
        let signedMs = try #require(Fixtures.claim("signedDate", of: jws) as? Double)
        let then = SignedDataVerifier(
            trustedRoots: try SignedDataVerifier.appleRoots(), validationTime: { Date(timeIntervalSince1970: signedMs / 1_000) })
        _ = try await then.verify(jws)
    }

    // MARK: Tampered copies of a real, currently valid notification

    static let realPath = "notifications-v2/real-apple/session-sandbox-2025/01-did-renew.json"

    @Test("one flipped character in any part is refused", arguments: [0, 1, 2])
    func flippedCharactersAreRefused(part: Int) async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        var parts = jws.split(separator: ".").map(String.init)
        var characters = Array(parts[part])
        let index = characters.count / 2
        characters[index] = characters[index] == "A" ? "B" : "A"
        parts[part] = String(characters)
        let tampered = parts.joined(separator: ".")
        await #expect(throws: SignedDataError.self) { try await apple2025.verify(tampered) }
    }

    @Test func aWellFormedChangeToTheHeaderOrThePayloadBreaksTheSignature() async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        var (header, rest) = try Self.header(of: jws)
        header["kid"] = "tampered"
        await #expect(throws: SignedDataError.signatureInvalid) {
            try await apple2025.verify(try Self.replacingHeader(header, rest))
        }
        var parts = jws.split(separator: ".").map(String.init)
        var payload = try #require(try JSONSerialization.jsonObject(with: Data(Self.decodedPart(jws, 1) ?? [])) as? [String: Any])
        payload["notificationType"] = "REFUND"
        parts[1] = Base64URL.encode(try JSONSerialization.data(withJSONObject: payload))
        await #expect(throws: SignedDataError.signatureInvalid) { try await apple2025.verify(parts.joined(separator: ".")) }
        // The untouched original verifies: only the change refused them.
        _ = try await apple2025.verify(jws)
    }

    @Test func aTruncatedJWSIsRefused() async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        for length in [0, 10, jws.count / 2, jws.count - 1] {
            await #expect(throws: SignedDataError.self) { try await apple2025.verify(String(jws.prefix(length))) }
        }
    }

    @Test func aMissingCertificateIsRefused() async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        let (header, rest) = try Self.header(of: jws)
        var x5c = try #require(header["x5c"] as? [String])
        x5c.removeLast()
        var shortened = header
        shortened["x5c"] = x5c
        await #expect(throws: SignedDataError.certificateChainMissing) {
            try await apple2025.verify(try Self.replacingHeader(shortened, rest))
        }
        let fixture = try Fixtures.text("notifications-v2/apple-lib-test-ca/missing-x5c-header.jws")
        await #expect(throws: SignedDataError.certificateChainMissing) { try await apple.verify(fixture) }
    }

    @Test func anotherAlgorithmIsRefused() async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        var (header, rest) = try Self.header(of: jws)
        header["alg"] = "none"
        await #expect(throws: SignedDataError.unsupportedAlgorithm) {
            try await apple2025.verify(try Self.replacingHeader(header, rest))
        }
    }

    @Test func aPayloadReSignedUnderAnotherRootIsRefused() async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        let payload = try #require(Self.decodedPart(jws, 1))
        let forged = try TestChain().signer().sign(payload)
        await #expect(throws: SignedDataError.chainUntrusted) { try await apple.verify(forged) }
        // Apple's real leaf and intermediate in the header do not help a signature by another key.
        var (header, rest) = try Self.header(of: forged)
        header["x5c"] = try Self.header(of: jws).0["x5c"]
        await #expect(throws: SignedDataError.signatureInvalid) {
            try await apple2025.verify(try Self.replacingHeader(header, rest))
        }
    }

    // MARK: Test chains, trusted only when configured

    @Test func aTestChainVerifiesOnlyWhenItsRootIsConfigured() async throws {
        let chain = try TestChain()
        let jws = try chain.signer().sign(Array(#"{"bundleId":"com.example"}"#.utf8))
        let configured = SignedDataVerifier(trustedRoots: try SignedDataVerifier.appleRoots(extraRootsPEM: [try chain.rootPEM]))
        #expect(try await configured.verify(jws) == Array(#"{"bundleId":"com.example"}"#.utf8))
        await #expect(throws: SignedDataError.chainUntrusted) { try await apple.verify(jws) }
    }

    @Test func aChainWithoutApplesMarkersIsRefusedEvenUnderATrustedRoot() async throws {
        let chain = try TestChain(markers: false)
        let jws = try chain.signer().sign(Array(#"{"a":1}"#.utf8))
        let configured = SignedDataVerifier(trustedRoots: try SignedDataVerifier.appleRoots(extraRootsPEM: [try chain.rootPEM]))
        await #expect(throws: SignedDataError.chainUntrusted) { try await configured.verify(jws) }
    }

    @Test func aChainValidatedOnceIsRefusedOnceItHasExpired() async throws {
        let chain = try TestChain(validFrom: Date() - 86_400, validUntil: Date() + 86_400)
        let jws = try chain.signer().sign(Array(#"{"a":1}"#.utf8))
        let clock = Clock()
        let verifier = SignedDataVerifier(
            trustedRoots: try SignedDataVerifier.appleRoots(extraRootsPEM: [try chain.rootPEM]), validationTime: { clock.now })
        _ = try await verifier.verify(jws)
        _ = try await verifier.verify(jws)  // the remembered chain
        clock.now = Date() + 2 * 86_400
        await #expect(throws: SignedDataError.chainUntrusted) { try await verifier.verify(jws) }
        // A remembered chain never excuses a bad signature.
        clock.now = Date()
        var parts = jws.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array(#"{"a":2}"#.utf8))
        await #expect(throws: SignedDataError.signatureInvalid) { try await verifier.verify(parts.joined(separator: ".")) }
    }

    /// A validation time the test moves.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var time = Date()
        var now: Date {
            get { lock.withLock { time } }
            set { lock.withLock { time = newValue } }
        }
    }

    @Test func anExpiredTestChainIsRefused() async throws {
        let chain = try TestChain(validFrom: Date() - 86_400 * 30, validUntil: Date() - 86_400)
        let jws = try chain.signer().sign(Array(#"{"a":1}"#.utf8))
        let configured = SignedDataVerifier(trustedRoots: try SignedDataVerifier.appleRoots(extraRootsPEM: [try chain.rootPEM]))
        await #expect(throws: SignedDataError.chainUntrusted) { try await configured.verify(jws) }
    }

    @Test("Apple's library test vectors verify under Apple's test root",
          arguments: ["test-notification.jws", "transaction-info.jws", "renewal-info.jws", "wrong-bundle-id.jws"])
    func appleLibraryVectors(_ name: String) async throws {
        let jws = try Fixtures.text("notifications-v2/apple-lib-test-ca/\(name)")
        let testCA = try Certificate(derEncoded: Array(try Data(contentsOf: Fixtures.url("certs/apple-lib-test/testCA.der"))))
        // wrong-bundle-id.jws has no signedDate: the time of its sibling test notification.
        let signedMs = Fixtures.claim("signedDate", of: jws) as? Double ?? 1_681_314_324_000
        let verifier = SignedDataVerifier(
            trustedRoots: [testCA], validationTime: { Date(timeIntervalSince1970: signedMs / 1_000) })
        _ = try await verifier.verify(jws)
        await #expect(throws: SignedDataError.chainUntrusted) { try await apple.verify(jws) }
    }

    @Test("certificates lacking Apple's markers are refused before the signature is looked at",
          arguments: [
              ["leaf-invalid-oid", "intermediate", "root"], ["leaf-under-invalid-oid-intermediate", "intermediate-invalid-oid", "root"],
          ])
    func appleLibraryInvalidOIDChains(_ names: [String]) async throws {
        let chain = try names.map { try Certificate(pemEncoded: try Fixtures.text("certs/apple-lib-test/\($0).pem")) }
        let root = chain[2]
        // Its signature is junk: only the chain decides here.
        let header = try JSONSerialization.data(withJSONObject: [
            "alg": "ES256", "x5c": try chain.map { Data(try $0.serializeAsPEM().derBytes).base64EncodedString() },
        ])
        let jws = Base64URL.encode(header) + "." + Base64URL.encode(Array(#"{"a":1}"#.utf8)) + "." + Base64URL.encode(Array(repeating: UInt8(1), count: 64))
        let verifier = SignedDataVerifier(trustedRoots: [root], validationTime: { Date(timeIntervalSince1970: 1_761_962_975) })
        await #expect(throws: SignedDataError.chainUntrusted) { try await verifier.verify(jws) }
    }

    @Test func theValidAppleLibraryTestChainPassesTheChainAndFailsOnlyTheJunkSignature() async throws {
        let chain = try ["leaf", "intermediate", "root"].map {
            try Certificate(pemEncoded: try Fixtures.text("certs/apple-lib-test/\($0).pem"))
        }
        let header = try JSONSerialization.data(withJSONObject: [
            "alg": "ES256", "x5c": try chain.map { Data(try $0.serializeAsPEM().derBytes).base64EncodedString() },
        ])
        let jws = Base64URL.encode(header) + "." + Base64URL.encode(Array(#"{"a":1}"#.utf8)) + "." + Base64URL.encode(Array(repeating: UInt8(1), count: 64))
        let verifier = SignedDataVerifier(trustedRoots: [chain[2]], validationTime: { Date(timeIntervalSince1970: 1_761_962_975) })
        await #expect(throws: SignedDataError.signatureInvalid) { try await verifier.verify(jws) }
    }

    @Test func theSimulatorsChainVerifiesWhenConfigured() async throws {
        let jws = try SignedDataSigner.simulator().sign(Array(#"{"bundleId":"com.example"}"#.utf8))
        let configured = SignedDataVerifier(
            trustedRoots: try SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM]))
        _ = try await configured.verify(jws)
        await #expect(throws: SignedDataError.chainUntrusted) { try await apple.verify(jws) }
    }

    // MARK: Helpers

    static func decodedPart(_ jws: String, _ index: Int) -> [UInt8]? {
        Base64URL.decode(jws.split(separator: ".")[index])
    }

    static func header(of jws: String) throws -> ([String: Any], String) {
        let header = try JSONSerialization.jsonObject(with: Data(decodedPart(jws, 0) ?? [])) as? [String: Any] ?? [:]
        return (header, jws.split(separator: ".", maxSplits: 1).map(String.init)[1])
    }

    static func replacingHeader(_ header: [String: Any], _ rest: String) throws -> String {
        Base64URL.encode(try JSONSerialization.data(withJSONObject: header)) + "." + rest
    }
}
