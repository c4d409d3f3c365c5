import Contracts
import LedgerClient

/// What the gateway asks of the ledger; `LedgerClient` over ZeroMQ in
/// production, an in-memory double in the HTTP tests.
protocol LedgerCalls: Sendable {
    func record(_ request: RecordRequest, requestID: String, deadlineMilliseconds: Int64) async throws -> RecordOutcome
    func applyNotification(
        _ notification: NotificationApply, requestID: String, deadlineMilliseconds: Int64
    ) async throws -> NotificationOutcome
    func entitlements(
        of userID: String, atMilliseconds: Int64, requestID: String, deadlineMilliseconds: Int64
    ) async throws -> EntitlementsAnswer
    func idempotentAnswer(for key: IdempotencyKey, requestID: String, deadlineMilliseconds: Int64) async throws -> RecordOutcome?
    func transactions(_ query: TransactionsQuery, requestID: String, deadlineMilliseconds: Int64) async throws -> TransactionsPage
}

extension LedgerClient: LedgerCalls {}
