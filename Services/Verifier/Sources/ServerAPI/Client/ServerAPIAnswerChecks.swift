import AppleFormats
import AppleJWS
import Contracts
import Foundation
import Logging

/// The checks every signed part of a Server API answer passes before
/// anything of it is used: those of a StoreKit 2 transaction or a version 2
/// notification (`SignedDataReader`: Apple's chain, this app's bundle, a known
/// environment, `STOREKEEPER_ACCEPT_SANDBOX`), and the Server API's own: the
/// data is of the environment that was asked, and production data names this
/// app's Apple ID (`STOREKEEPER_APPLE_APP_ID`) where Apple puts it.
///
/// A failure is logged as an error (Apple's answers are expected to pass;
/// one that does not is either an attack or a configuration to fix) and
/// thrown as `answerInvalid`: nothing of that answer is recorded.
struct ServerAPIAnswerChecks: Sendable {
    let reader: SignedDataReader
    let bundleID: String
    let appAppleID: Int64
    let logger: Logger

    /// A signed transaction (`signedTransactionInfo`, an item of `signedTransactions`).
    func transaction(_ jws: String, from environment: AppleEnvironment, nowMs: Int64) async throws(ServerAPIError) -> VerifyResult {
        let result: VerifyResult
        do {
            result = try await reader.transaction(jws, nowMs: nowMs)
        } catch {
            throw refused(error)
        }
        guard result.environment == environment else { throw refused(Self.otherEnvironment) }
        return result
    }

    /// A signed renewal info (`signedRenewalInfo`) of `originalTransactionID`.
    func renewal(
        _ jws: String, from environment: AppleEnvironment, originalTransactionID: String
    ) async throws(ServerAPIError) -> PendingRenewal {
        do throws(ServiceFailure) {
            let payload: [UInt8]
            do {
                payload = try await reader.verifier.verify(jws)
            } catch {
                throw ServiceFailure(.signatureInvalid, message: "the signed renewal info does not verify (\(error.code))")
            }
            guard let claims = try? JSONDecoder().decode(SignedRenewalClaims.self, from: Data(payload)) else {
                throw SignedDataReader.invalid("the signed renewal info is not of the expected shape")
            }
            guard try SignedDataReader.environment(claims.environment) == environment else { throw Self.otherEnvironment }
            let pending = try SignedDataReader.pendingRenewal(claims)
            guard pending.originalTransactionID == originalTransactionID else {
                throw SignedDataReader.invalid("the renewal info is about another subscription")
            }
            return pending
        } catch {
            throw refused(error)
        }
    }

    /// A version 2 notification's `signedPayload`, with what it nests.
    func notification(
        _ jws: String, from environment: AppleEnvironment, receivedAtMs: Int64
    ) async throws(ServerAPIError) -> NotificationApply {
        let apply: NotificationApply
        do {
            apply = try await reader.notification(jws, receivedAtMs: receivedAtMs)
        } catch {
            throw refused(error)
        }
        // The reader has just verified this JWS: its payload can be read for the fields it does not check.
        guard
            let app = Self.verifiedPayload(jws).flatMap({
                try? JSONDecoder().decode(SignedNotificationClaims.self, from: Data($0))
            })
        else { throw refused(SignedDataReader.invalid("the notification is not of the expected shape")) }
        if let data = app.data ?? app.summary {
            try check(bundleID: data.bundleId, appAppleID: data.appAppleId, environment: data.environment, asked: environment)
        }
        return apply
    }

    /// The app and environment an answer names beside its JWS (history, statuses).
    func check(
        bundleID: String?, appAppleID: Int64?, environment: String?, asked: AppleEnvironment
    ) throws(ServerAPIError) {
        do throws(ServiceFailure) {
            if let bundleID, bundleID != self.bundleID {
                throw ServiceFailure(.bundleMismatch, message: "the answer belongs to another app")
            }
            if let environment, try SignedDataReader.environment(environment) != asked { throw Self.otherEnvironment }
            if asked == .production, appAppleID != self.appAppleID {
                throw ServiceFailure(
                    .bundleMismatch, message: "production data that does not name this app's Apple ID (STOREKEEPER_APPLE_APP_ID)")
            }
        } catch {
            throw refused(error)
        }
    }

    private static let otherEnvironment = SignedDataReader.invalid("the data is from another environment than the one asked")

    private func refused(_ failure: ServiceFailure) -> ServerAPIError {
        logger.error(
            "a signed answer of the App Store Server API failed its checks; nothing of it is used",
            metadata: ["failure": "\(failure.code)", "failure.message": "\(failure.message)"])
        return .answerInvalid(failure)
    }

    /// The payload of a compact JWS that has been verified already.
    private static func verifiedPayload(_ jws: String) -> [UInt8]? {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        return Base64URL.decode(parts[1])
    }
}
