import Contracts
import Foundation

/// An answer kept for an Idempotency-Key: the outcome as serialized when it
/// was first recorded, so a replay sends the same bytes.
public struct StoredIdempotentAnswer: Equatable, Sendable {
    public var scope: String
    public var key: String
    public var requestSHA256: String
    public var outcome: [UInt8]
    public var createdAtMs: Int64

    public init(scope: String, key: String, requestSHA256: String, outcome: [UInt8], createdAtMs: Int64) {
        self.scope = scope
        self.key = key
        self.requestSHA256 = requestSHA256
        self.outcome = outcome
        self.createdAtMs = createdAtMs
    }
}

/// A transaction credited to a user, with the seq of the event that credited it.
public struct CreditedRecord: Equatable, Sendable {
    public var transaction: StoredTransaction
    /// 0 when the crediting event predates `granted_seq` and was pruned before the migration.
    public var grantedSeq: UInt64
}

/// Where a page of a user's transactions starts: after this row, in the list's
/// order (granted_seq, environment, transaction_id, all descending). Clients
/// see it as an opaque base64url token.
public struct CreditCursor: Equatable, Sendable {
    public var grantedSeq: UInt64
    public var environment: String
    public var transactionID: String

    public init(grantedSeq: UInt64, environment: String, transactionID: String) {
        self.grantedSeq = grantedSeq
        self.environment = environment
        self.transactionID = transactionID
    }

    public init(after record: CreditedRecord) {
        self.init(
            grantedSeq: record.grantedSeq, environment: StoredEnvironment.name(record.transaction.key.environment),
            transactionID: record.transaction.key.transactionID)
    }

    public var token: String {
        Data("\(grantedSeq).\(environment).\(transactionID)".utf8).base64EncodedString()
            .replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    /// nil for a token this ledger did not make.
    public init?(token: String) {
        var base64 = token.replacing("-", with: "+").replacing("_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let seq = UInt64(parts[0]), !parts[1].isEmpty, !parts[2].isEmpty else { return nil }
        self.init(grantedSeq: seq, environment: String(parts[1]), transactionID: String(parts[2]))
    }
}
