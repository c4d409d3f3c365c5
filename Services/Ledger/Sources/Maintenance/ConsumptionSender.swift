import Contracts
import Foundation
import Logging
import Metrics
import ServiceLifecycle

/// Sends the consumption information the ledger queued for CONSUMPTION_REQUEST
/// notifications (`ConsumptionRules`) to Apple, through the verifier pool,
/// every `interval`. Sent or refused for good, it is removed; otherwise it is
/// tried again after its back-off, for as long as Apple waits (12 hours).
final class ConsumptionSender: Service, Sendable {
    static let batch = 20

    private let committer: GroupCommitter
    private let serverAPI: LedgerServerAPI
    private let interval: Duration
    private let logger: Logger

    init(committer: GroupCommitter, serverAPI: LedgerServerAPI, interval: Duration, logger: Logger) {
        self.committer = committer
        self.serverAPI = serverAPI
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        await runPeriodically(every: interval) { await self.sendDue() }
    }

    func sendDue() async {
        guard serverAPI.hasVerifiers else { return }
        let claimed: [PendingConsumption]
        do {
            guard case .consumptions(let due) = try await committer.submit(.claimConsumptions(limit: Self.batch), requestID: "consumption")
            else { return }
            claimed = due
        } catch {
            logger.warning("consumption claim failed", metadata: ["error": "\(loggable(error))"])
            return
        }
        await withDiscardingTaskGroup { group in
            for pending in claimed {
                group.addTask { await self.send(pending) }
            }
        }
    }

    private func send(_ pending: PendingConsumption) async {
        let requestID = "consumption-\(UUID().uuidString.lowercased())"
        let metadata: Logger.Metadata = ["request.id": "\(requestID)", "consumption.attempt": "\(pending.attempts)"]
        let outcome: String
        switch await serverAPI.sendConsumption(pending.request, requestID: requestID) {
        case .answered:
            outcome = "sent"
            logger.info("consumption information sent to Apple", metadata: metadata)
        case .unconfigured:
            logger.warning(
                "STOREKEEPER_SEND_CONSUMPTION_INFO is on but the verifiers have no App Store Server API credentials",
                metadata: metadata)
            return
        case .failed(let code, let retryable):
            guard !retryable else {
                logger.info("consumption information not sent yet", metadata: metadata.merging(["failure.code": "\(code)"]) { $1 })
                return
            }
            outcome = "refused"
            logger.warning("Apple refused the consumption information", metadata: metadata.merging(["failure.code": "\(code)"]) { $1 })
        }
        Counter(label: "storekeeper_consumption_information_total", dimensions: [("outcome", outcome)]).increment()
        do {
            _ = try await committer.submit(.consumptionDone(pending.key), requestID: requestID)
        } catch {
            logger.warning("consumption information not marked done", metadata: metadata.merging(["error": "\(loggable(error))"]) { $1 })
        }
    }
}
