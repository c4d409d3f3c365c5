import Contracts
import Foundation
import GRDB

/// The catch-up cursor, consumption information waiting to be sent, and the
/// reads they need (migration "v5-server-api").
extension SQLiteLedgerSession {
    func catchUpCursor(_ environment: AppleEnvironment) throws -> CatchUpCursor? {
        let statement = try db.cachedStatement(
            sql: """
                SELECT applied_until_ms, lease_holder, lease_until_ms, updated_at_ms FROM catchup_cursor
                WHERE environment = ?
                """)
        return try Row.fetchOne(statement, arguments: [StoredEnvironment.name(environment)]).map { row in
            CatchUpCursor(
                environment: environment, appliedUntilMs: row[0], leaseHolder: row[1], leaseUntilMs: row[2],
                updatedAtMs: row[3])
        }
    }

    func saveCatchUpCursor(_ cursor: CatchUpCursor) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO catchup_cursor (environment, applied_until_ms, lease_holder, lease_until_ms, updated_at_ms)
                VALUES (?, ?, ?, ?, ?)
                """)
        try statement.execute(arguments: [
            StoredEnvironment.name(cursor.environment), cursor.appliedUntilMs, cursor.leaseHolder, cursor.leaseUntilMs,
            cursor.updatedAtMs,
        ])
    }

    /// The earliest time the ledger bound a purchase to `user`: its bindings'
    /// times, its first credit (a purchase moved away since was bound to it
    /// then; a binding's own time is that of its last move), and every move
    /// to or from it. binding_history has no index by user: read only for a
    /// CONSUMPTION_REQUEST, which is rare.
    func firstBindingAtMs(of user: String) throws -> Int64? {
        let statement = try db.cachedStatement(
            sql: """
                SELECT MIN(at_ms) FROM (
                    SELECT MIN(bound_at_ms) AS at_ms FROM bindings WHERE user_id = ?1
                    UNION ALL
                    SELECT MIN(granted_at_ms) FROM transactions WHERE granted_to = ?1
                    UNION ALL
                    SELECT MIN(at_ms) FROM binding_history WHERE to_user_id = ?1 OR from_user_id = ?1)
                """)
        return try Int64.fetchOne(statement, arguments: [user])
    }

    /// `LifetimeSpend.sql` with SQLite's numbered parameters (`?1` for `$1`).
    private static let lifetimeSpendSQL = LifetimeSpend.sql.replacingOccurrences(of: "$", with: "?")

    func lifetimeSpend(of user: String, in environment: AppleEnvironment) throws -> LifetimeSpend {
        let statement = try db.cachedStatement(sql: Self.lifetimeSpendSQL)
        return LifetimeSpend(
            rows: try Row.fetchAll(statement, arguments: [user, StoredEnvironment.name(environment)]).map {
                ($0[0], $0[1], $0[2], $0[3])
            })
    }

    func consumptionsDue(now: Int64, limit: Int) throws -> [PendingConsumption] {
        let statement = try db.cachedStatement(
            sql: """
                SELECT environment, transaction_id, request, requested_at_ms, next_attempt_at_ms, attempts
                FROM consumption_requests WHERE next_attempt_at_ms <= ?
                ORDER BY next_attempt_at_ms, environment, transaction_id LIMIT ?
                """)
        return try Row.fetchAll(statement, arguments: [now, limit]).map { row in
            PendingConsumption(
                key: TransactionKey(StoredEnvironment.environment(row[0]), row[1]),
                request: try ConsumptionInfoRequest(serializedBytes: row[2] as Data), requestedAtMs: row[3],
                nextAttemptAtMs: row[4], attempts: Int32(truncatingIfNeeded: row[5] as Int64))
        }
    }

    func saveConsumption(_ consumption: PendingConsumption) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO consumption_requests (
                    environment, transaction_id, request, requested_at_ms, next_attempt_at_ms, attempts)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
        let bytes: [UInt8] = try consumption.request.serializedBytes()
        try statement.execute(arguments: [
            StoredEnvironment.name(consumption.key.environment), consumption.key.transactionID, Data(bytes),
            consumption.requestedAtMs, consumption.nextAttemptAtMs, Int64(consumption.attempts),
        ])
    }

    func deleteConsumption(_ key: TransactionKey) throws {
        let statement = try db.cachedStatement(
            sql: "DELETE FROM consumption_requests WHERE environment = ? AND transaction_id = ?")
        try statement.execute(arguments: [StoredEnvironment.name(key.environment), key.transactionID])
    }
}
