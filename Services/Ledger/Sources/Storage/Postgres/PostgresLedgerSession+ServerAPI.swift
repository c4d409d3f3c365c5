import Contracts
import PostgresNIO

/// The catch-up cursor and consumption information waiting to be sent, in
/// SQL (the SQLite session's statements, with PostgreSQL's types). The group
/// session sends its pending writes first and runs these in its savepoint:
/// they are rare, and two ledgers claiming the same cursor are kept apart by
/// REPEATABLE READ (the second's write is a serialization failure, and its
/// retry sees the lease taken).
extension PostgresLedgerSession {
    func catchUpCursor(_ environment: AppleEnvironment) throws -> CatchUpCursor? {
        try db.query(
            """
            SELECT applied_until_ms, lease_holder, lease_until_ms, updated_at_ms FROM catchup_cursor
            WHERE environment = $1
            """, [.text(StoredEnvironment.name(environment))]
        ).rows.first.map { row in
            let row = row.makeRandomAccess()
            return CatchUpCursor(
                environment: environment, appliedUntilMs: try row.optionalInt(0), leaseHolder: try row.optionalString(1),
                leaseUntilMs: try row.optionalInt(2), updatedAtMs: try row.int(3))
        }
    }

    func saveCatchUpCursor(_ cursor: CatchUpCursor) throws {
        try db.query(
            """
            INSERT INTO catchup_cursor (environment, applied_until_ms, lease_holder, lease_until_ms, updated_at_ms)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (environment) DO UPDATE SET applied_until_ms = excluded.applied_until_ms,
                lease_holder = excluded.lease_holder, lease_until_ms = excluded.lease_until_ms,
                updated_at_ms = excluded.updated_at_ms
            """,
            [
                .text(StoredEnvironment.name(cursor.environment)), .int(cursor.appliedUntilMs), .text(cursor.leaseHolder),
                .int(cursor.leaseUntilMs), .int(cursor.updatedAtMs),
            ])
    }

    /// As SQLite's: bindings' times, the first credit, and every move to or from the user.
    func firstBindingAtMs(of user: String) throws -> Int64? {
        try db.query(
            """
            SELECT MIN(at_ms) FROM (
                SELECT MIN(bound_at_ms) AS at_ms FROM bindings WHERE user_id = $1
                UNION ALL
                SELECT MIN(granted_at_ms) FROM transactions WHERE granted_to = $1
                UNION ALL
                SELECT MIN(at_ms) FROM binding_history WHERE to_user_id = $1 OR from_user_id = $1) AS times
            """, [.text(user)]
        ).rows.first?.makeRandomAccess().optionalInt(0)
    }

    func lifetimeSpend(of user: String, in environment: AppleEnvironment) throws -> LifetimeSpend {
        LifetimeSpend(
            rows: try db.query(LifetimeSpend.sql, [.text(user), .text(StoredEnvironment.name(environment))]).rows.map {
                let row = $0.makeRandomAccess()
                return (try row.optionalString(0), try row.int(1), try row.int(2), try row.int(3))
            })
    }

    func consumptionsDue(now: Int64, limit: Int) throws -> [PendingConsumption] {
        try db.query(
            """
            SELECT environment, transaction_id, request, requested_at_ms, next_attempt_at_ms, attempts
            FROM consumption_requests WHERE next_attempt_at_ms <= $1
            ORDER BY next_attempt_at_ms, environment, transaction_id LIMIT $2
            """, [.int(now), .int(Int64(limit))]
        ).rows.map { row in
            let row = row.makeRandomAccess()
            return PendingConsumption(
                key: TransactionKey(StoredEnvironment.environment(try row.string(0)), try row.string(1)),
                request: try ConsumptionInfoRequest(serializedBytes: try row.bytes(2)), requestedAtMs: try row.int(3),
                nextAttemptAtMs: try row.int(4), attempts: Int32(truncatingIfNeeded: try row.int(5)))
        }
    }

    func saveConsumption(_ consumption: PendingConsumption) throws {
        try db.query(
            """
            INSERT INTO consumption_requests (
                environment, transaction_id, request, requested_at_ms, next_attempt_at_ms, attempts)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (environment, transaction_id) DO UPDATE SET request = excluded.request,
                requested_at_ms = excluded.requested_at_ms, next_attempt_at_ms = excluded.next_attempt_at_ms,
                attempts = excluded.attempts
            """,
            [
                .text(StoredEnvironment.name(consumption.key.environment)), .text(consumption.key.transactionID),
                .bytes(try consumption.request.serializedBytes()), .int(consumption.requestedAtMs),
                .int(consumption.nextAttemptAtMs), .int(Int64(consumption.attempts)),
            ])
    }

    func deleteConsumption(_ key: TransactionKey) throws {
        try db.query(
            "DELETE FROM consumption_requests WHERE environment = $1 AND transaction_id = $2",
            [.text(StoredEnvironment.name(key.environment)), .text(key.transactionID)])
    }
}
