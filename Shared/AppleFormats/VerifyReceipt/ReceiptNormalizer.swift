import Contracts
import SwiftProtobuf

/// Turns a valid verifyReceipt answer (status 0 or 21006) into the shared
/// `VerifyResult`, whatever its layout:
/// - iOS 7: `receipt.in_app`, `latest_receipt_info`, `pending_renewal_info`;
/// - iOS 6: the transaction is `receipt` itself (`bid`, `bvrs`, `product_id`),
///   `latest_receipt_info` / `latest_expired_receipt_info` are single objects,
///   renewal fields sit at the top level.
/// Transactions from every list are merged by `transaction_id`; Apple's order
/// is not trusted, so the result is sorted by purchase time.
public enum ReceiptNormalizer {
    public static func normalize(
        _ response: AppleResponse, environment: AppleEnvironment, receiptSHA256: String
    ) -> VerifyResult {
        let body = response.body
        let receipt = body["receipt"] ?? .null
        var result = VerifyResult()
        // The endpoint that accepted the receipt is the truth: Apple's own
        // `environment` field has disagreed with `receipt_type` before.
        result.environment = environment
        result.appleStatus = Int32(response.status)
        result.receiptSha256 = receiptSHA256
        result.latestReceipt = body["latest_receipt"]?.text ?? ""

        let isIOS6 = receipt["in_app"] == nil && receipt["bundle_id"] == nil
            && (receipt["bid"] != nil || receipt["transaction_id"] != nil)
        var sources: [JSONValue]
        if isIOS6 {
            result.style = .ios6
            result.bundleID = receipt["bid"]?.text ?? ""
            result.applicationVersion = receipt["bvrs"]?.text ?? ""
            sources = [receipt]
        } else {
            result.style = receipt.object == nil ? .unspecified : .ios7
            result.bundleID = receipt["bundle_id"]?.text ?? ""
            result.applicationVersion = receipt["application_version"]?.text ?? ""
            result.originalApplicationVersion = receipt["original_application_version"]?.text ?? ""
            result.receiptCreationDateMs = TransactionReader.milliseconds(receipt, "receipt_creation_date") ?? 0
            result.requestDateMs = TransactionReader.milliseconds(receipt, "request_date") ?? 0
            sources = receipt["in_app"]?.objects ?? []
        }
        // Later lists are newer: their fields win for the same transaction.
        sources += body["latest_expired_receipt_info"]?.objects ?? []
        sources += body["latest_receipt_info"]?.objects ?? []
        result.transactions = merged(sources)
            .sorted { ($0.purchaseDateMs, $0.transactionID) < ($1.purchaseDateMs, $1.transactionID) }

        var renewals = (body["pending_renewal_info"]?.objects ?? []).compactMap {
            PendingRenewalReader.read($0, originalTransactionID: nil)
        }
        if isIOS6, let renewal = PendingRenewalReader.read(body, originalTransactionID: receipt["original_transaction_id"]?.text) {
            renewals.append(renewal)
        }
        result.pendingRenewals = attributed(renewals, to: result.transactions)
        return result
    }

    /// One transaction per `transaction_id`, first-seen order. A later
    /// reading's set fields win (protobuf merge), so a newer list updates an
    /// older one without a masked or missing value erasing a good one.
    private static func merged(_ objects: [JSONValue]) -> [Transaction] {
        var order: [String] = []
        var byID: [String: Transaction] = [:]
        for transaction in objects.compactMap(TransactionReader.read) {
            let id = transaction.transactionID
            guard var existing = byID[id] else {
                order.append(id)
                byID[id] = transaction
                continue
            }
            // Cannot fail: the bytes were just encoded from the same message type.
            try? existing.merge(serializedBytes: transaction.serializedBytes() as [UInt8])
            byID[id] = existing
        }
        return order.compactMap { byID[$0] }
    }

    /// Older answers leave `original_transaction_id` out of renewal info:
    /// attribute it through the product when exactly one subscription has
    /// that product. One entry per subscription (the last one wins).
    private static func attributed(_ renewals: [PendingRenewal], to transactions: [Transaction]) -> [PendingRenewal] {
        var result: [String: PendingRenewal] = [:]
        var order: [String] = []
        for var renewal in renewals {
            if renewal.originalTransactionID.isEmpty {
                let products = Set([renewal.productID, renewal.autoRenewProductID].filter { !$0.isEmpty })
                let owners = Set(transactions.filter { products.contains($0.productID) }.map(\.originalTransactionID))
                guard owners.count == 1, let owner = owners.first else { continue }
                renewal.originalTransactionID = owner
            }
            if result[renewal.originalTransactionID] == nil { order.append(renewal.originalTransactionID) }
            result[renewal.originalTransactionID] = renewal
        }
        return order.compactMap { result[$0] }
    }
}
