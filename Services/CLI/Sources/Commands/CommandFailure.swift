import ArgumentParser
import Foundation

/// How a command ends when the gateway or the simulator refuses: the reason
/// on standard error, and an exit status a script can tell apart
/// (75, EX_TEMPFAIL, when trying again later may work; 1 otherwise).
enum CommandFailure {
    static let retryableStatus: Int32 = 75

    static func reporting<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let failure as GatewayClient.Failed {
            FileHandle.standardError.write(Data("error: \(failure)\n".utf8))
            throw ExitCode(failure.retryable ? retryableStatus : 1)
        } catch let error as URLError {
            FileHandle.standardError.write(Data("error: cannot reach the gateway: \(error.localizedDescription)\n".utf8))
            throw ExitCode(retryableStatus)
        }
    }
}
