import ArgumentParser
import Foundation
import Verifier

/// How an `apple` command ends when the Server API call fails: the stable
/// code and Apple's own error on standard error, exit status 75 when trying
/// again later may work (as `CommandFailure`), 1 otherwise.
enum ServerAPIFailure {
    static func reporting<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ServerAPIError {
            var line = "error: \(error)"
            if let code = error.appleErrorCode { line += " (Apple \(code)" + (error.appleMessage.map { ": \($0)" } ?? "") + ")" }
            if let failure = error.transportFailure {
                line += " (no answer: \(failure)"
                if failure == .tlsFailure { line += "; STOREKEEPER_APPLE_CA_FILE names the certificates trusted" }
                line += ")"
            }
            if error.isUnauthorized { line += ": Apple refused the credentials (STOREKEEPER_APPLE_ISSUER_ID, _KEY_ID, _PRIVATE_KEY_FILE)" }
            FileHandle.standardError.write(Data((line + "\n").utf8))
            throw ExitCode(error.isRetryable ? CommandFailure.retryableStatus : 1)
        }
    }
}
