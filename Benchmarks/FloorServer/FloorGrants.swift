import Contracts
import Foundation
import GRDB
import Synchronization

/// The grants in SQLite, as the asyncio peer keeps them: WAL with
/// `synchronous=FULL`, each (environment, transaction_id) granted once by a
/// `UNIQUE` key, and every request waiting committed in one transaction.
/// One writer task runs while requests wait; none runs when none do.
final class FloorGrants: Sendable {
    struct Work: Sendable {
        let userID: String
        let environment: String
        let transactions: [Transaction]
        let renewals: [String: Bool]
    }

    struct Subscription: Sendable {
        let productID: String
        let originalTransactionID: String
        let environment: String
        let expiresDateMs: Int64
        let autoRenew: Bool
    }

    struct Recorded: Sendable {
        var granted: [Transaction] = []
        var alreadyGranted: [String] = []
        var subscriptions: [Subscription] = []
    }

    private typealias Waiting = (work: Work, continuation: CheckedContinuation<Recorded, any Error>)

    private let database: DatabasePool
    private let state = Mutex<(waiting: [Waiting], writing: Bool)>(([], false))

    init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        database = try DatabasePool(path: directory + "/floor.sqlite")
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS grants (environment TEXT, transaction_id TEXT, user_id TEXT,
                        product_id TEXT, original_transaction_id TEXT, PRIMARY KEY (environment, transaction_id));
                    CREATE TABLE IF NOT EXISTS subscriptions (original_transaction_id TEXT, environment TEXT,
                        user_id TEXT, product_id TEXT, expires_date_ms INTEGER, auto_renew INTEGER,
                        PRIMARY KEY (environment, original_transaction_id));
                    CREATE INDEX IF NOT EXISTS subscriptions_by_user ON subscriptions (user_id);
                    """)
        }
    }

    func record(_ work: Work) async throws -> Recorded {
        try await withCheckedThrowingContinuation { continuation in
            let startWriter = state.withLock { state in
                state.waiting.append((work, continuation))
                defer { state.writing = true }
                return !state.writing
            }
            if startWriter { Task { await writeWhileWaiting() } }
        }
    }

    /// Commits batch after batch until nothing waits.
    private func writeWhileWaiting() async {
        while true {
            let batch = state.withLock { state in
                defer { state.waiting.removeAll(keepingCapacity: true) }
                if state.waiting.isEmpty { state.writing = false }
                return state.waiting
            }
            if batch.isEmpty { return }
            let works = batch.map(\.work)
            do {
                let results = try await database.write { db in try works.map { try Self.apply($0, db) } }
                for (waiting, result) in zip(batch, results) { waiting.continuation.resume(returning: result) }
            } catch {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            }
        }
    }

    private static func apply(_ work: Work, _ db: Database) throws -> Recorded {
        var recorded = Recorded()
        let grant = try db.cachedStatement(sql: "INSERT OR IGNORE INTO grants VALUES (?, ?, ?, ?, ?)")
        let subscribe = try db.cachedStatement(
            sql: """
                INSERT INTO subscriptions VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET
                user_id = excluded.user_id, auto_renew = excluded.auto_renew,
                expires_date_ms = max(expires_date_ms, excluded.expires_date_ms)
                """)
        for transaction in work.transactions {
            try grant.execute(arguments: [
                work.environment, transaction.transactionID, work.userID, transaction.productID,
                transaction.originalTransactionID,
            ])
            if db.changesCount > 0 {
                recorded.granted.append(transaction)
            } else {
                recorded.alreadyGranted.append(transaction.transactionID)
            }
            if transaction.hasExpiresDateMs {
                try subscribe.execute(arguments: [
                    transaction.originalTransactionID, work.environment, work.userID, transaction.productID,
                    transaction.expiresDateMs, work.renewals[transaction.originalTransactionID] ?? true,
                ])
            }
        }
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT product_id, original_transaction_id, environment, expires_date_ms, auto_renew
                    FROM subscriptions WHERE user_id = ?
                    """),
            arguments: [work.userID])
        recorded.subscriptions = rows.map {
            Subscription(
                productID: $0[0], originalTransactionID: $0[1], environment: $0[2], expiresDateMs: $0[3],
                autoRenew: $0[4])
        }
        return recorded
    }
}
