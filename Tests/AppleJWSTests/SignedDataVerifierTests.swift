import AppleJWS
import Foundation
import Testing
import X509

@Suite("SignedDataVerifier: App Store JWS against Apple's chain")
struct SignedDataVerifierTests {
    let apple = SignedDataVerifier(trustedRoots: try! SignedDataVerifier.appleRoots())

    @Test("real notifications of 2025 verify now, with their nested transaction and renewal info",
          arguments: Fixtures.sessionNotifications)
    func realNotificationsVerify(_ path: String) async throws {
        let jws = try Fixtures.signedPayload(path)
        let payload = try await apple.verify(jws)
        let object = try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any]
        #expect(object?["notificationUUID"] is String)
        let data = try #require(object?["data"] as? [String: Any])
        for key in ["signedTransactionInfo", "signedRenewalInfo"] {
            let nested = try #require(data[key] as? String)
            _ = try await apple.verify(nested)
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

    @Test("one flipped byte in the header, the payload or the signature is refused", arguments: [0, 1, 2])
    func flippedBytesAreRefused(part: Int) async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        var parts = jws.split(separator: ".").map(String.init)
        // Flip one character in the middle of the part (staying in the base64url alphabet).
        var characters = Array(parts[part])
        let index = characters.count / 2
        characters[index] = characters[index] == "A" ? "B" : "A"
        parts[part] = String(characters)
        let tampered = parts.joined(separator: ".")
        await #expect(throws: SignedDataError.self) { try await apple.verify(tampered) }
    }

    @Test func aTruncatedJWSIsRefused() async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        for length in [0, 10, jws.count / 2, jws.count - 1] {
            await #expect(throws: SignedDataError.self) { try await apple.verify(String(jws.prefix(length))) }
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
            try await apple.verify(try Self.replacingHeader(shortened, rest))
        }
        let fixture = try Fixtures.text("notifications-v2/apple-lib-test-ca/missing-x5c-header.jws")
        await #expect(throws: SignedDataError.certificateChainMissing) { try await apple.verify(fixture) }
    }

    @Test func anotherAlgorithmIsRefused() async throws {
        let jws = try Fixtures.signedPayload(Self.realPath)
        var (header, rest) = try Self.header(of: jws)
        header["alg"] = "none"
        await #expect(throws: SignedDataError.unsupportedAlgorithm) {
            try await apple.verify(try Self.replacingHeader(header, rest))
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
            try await apple.verify(try Self.replacingHeader(header, rest))
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
        let jws = Self.base64URL(Array(header)) + "." + Self.base64URL(Array(#"{"a":1}"#.utf8)) + "." + Self.base64URL(Array(repeating: 1, count: 64))
        let verifier = SignedDataVerifier(trustedRoots: [root], validationTime: { Date(timeIntervalSince1970: 1_761_962_975) })
        await #expect(throws: SignedDataError.chainUntrusted) { try await verifier.verify(jws) }
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
        var base64 = String(jws.split(separator: ".")[index]).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }

    static func header(of jws: String) throws -> ([String: Any], String) {
        let header = try JSONSerialization.jsonObject(with: Data(decodedPart(jws, 0) ?? [])) as? [String: Any] ?? [:]
        return (header, jws.split(separator: ".", maxSplits: 1).map(String.init)[1])
    }

    static func replacingHeader(_ header: [String: Any], _ rest: String) throws -> String {
        base64URL(Array(try JSONSerialization.data(withJSONObject: header))) + "." + rest
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
