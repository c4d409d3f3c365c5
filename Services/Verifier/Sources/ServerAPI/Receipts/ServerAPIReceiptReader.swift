import AppleFormats
import Contracts
import Logging
import StorekeeperCore

/// `STOREKEEPER_RECEIPT_VERIFICATION=server_api`: a receipt of
/// POST /v1/receipts answered by the App Store Server API instead of
/// verifyReceipt, in the same `VerifyResult` (style iOS 7, the same
/// `transaction_id`s), so the ledger records it as it records verifyReceipt's
/// and one purchase seen both ways is one transaction.
///
/// The receipt is read locally (`AppReceiptParser`) for its bundle, its type
/// and its purchases' ids, and nothing else: its PKCS#7 signature is not
/// verified (as Apple's `ReceiptUtility` does not), so nothing is credited
/// from it. Every transaction comes from Apple's signed answers, each JWS
/// verified by the client (chain, bundle, environment, `appAppleId`).
///
/// - One Get Transaction History per receipt, of its first purchase's id
///   (production first, sandbox on 4040010): a receipt is one Apple
///   account's, and the history of any of its ids is every transaction that
///   account has in the app, renewals included.
/// - A purchase the receipt lists and the history leaves out (Apple leaves
///   consumables out) is asked for alone, Get Transaction Info, in the
///   history's environment only (one call each, no fallback): at most `maximumSingleLookups` a receipt, so an
///   unsigned receipt cannot make Storekeeper spend Apple's rate limit. One
///   Apple does not know is not credited.
/// - With a subscription among them, Get All Subscription Statuses gives each
///   subscription's signed renewal info (the pending renewals).
///
/// It is a backend of `ReceiptVerifier`, which caps and coalesces its calls:
/// Apple rate-limits the Server API.
public struct ServerAPIReceiptReader: Sendable {
    /// Receipt purchases missing from the history looked up one by one, at most.
    static let maximumSingleLookups = 20

    let client: AppStoreServerClient
    let bundleRule: BundleRule
    /// `STOREKEEPER_ACCEPT_SANDBOX`: false refuses a sandbox receipt before any call.
    let acceptSandbox: Bool

    public init(client: AppStoreServerClient, bundleIDs: [String], acceptSandbox: Bool) {
        self.client = client
        self.bundleRule = BundleRule(allowed: bundleIDs)
        self.acceptSandbox = acceptSandbox
    }

    /// The receipt's purchases as Apple's history has them, or the failure a client hears.
    func read(
        _ request: VerifyRequest, digest: String, deadline: ContinuousClock.Instant, logger: Logger
    ) async throws(ServiceFailure) -> VerifyResult {
        let receipt = try parse(request.receiptData, logger: logger)
        var result = VerifyResult.with {
            $0.style = .ios7
            $0.bundleID = receipt.bundleID ?? ""
            $0.applicationVersion = receipt.appVersion ?? ""
            $0.originalApplicationVersion = receipt.originalAppVersion ?? ""
            $0.receiptCreationDateMs = receipt.creationDateMs ?? 0
            $0.requestDateMs = client.nowMs
            // Kept by the ledger to refresh subscriptions: in this mode a refresh reads the history again.
            $0.latestReceipt = request.receiptData
            $0.receiptSha256 = digest
        }
        // No purchases: the same empty result verifyReceipt gives (the gateway answers 422 receipt_invalid).
        guard let first = receipt.anyTransactionID else {
            result.environment = Self.isSandbox(receipt) ? .sandbox : .production
            return result
        }
        let history = try await call(logger) { () throws(ServerAPIError) in
            try await client.transactionHistory(first, deadline: deadline)
        }
        result.environment = history.environment
        var byID: [String: Transaction] = [:]
        for transaction in history.transactions { byID[transaction.transactionID] = transaction }
        let lookups = try await addMissing(receipt, to: &byID, in: history.environment, deadline: deadline, logger: logger)
        result.transactions = byID.values.sorted {
            ($0.purchaseDateMs, $0.transactionID) < ($1.purchaseDateMs, $1.transactionID)
        }
        result.pendingRenewals = try await renewals(of: result.transactions, in: history.environment, deadline: deadline, logger)
        logger.info(
            "receipt read from the App Store Server API",
            metadata: [
                "apple.environment": "\(history.environment == .sandbox ? "sandbox" : "production")",
                "receipt.transactions": "\(result.transactions.count)", "apple.single_lookups": "\(lookups)",
            ])
        return result
    }

    /// The receipt's fields, refused before any call when malformed, another app's, or a refused sandbox's.
    private func parse(_ base64: String, logger: Logger) throws(ServiceFailure) -> AppReceipt {
        let receipt: AppReceipt
        do {
            receipt = try AppReceiptParser.parse(base64: base64)
        } catch {
            logger.info("receipt refused: not an app receipt", metadata: ["failure": "\(error)"])
            throw ServiceFailure(error.failureCode, message: "the receipt is not an app receipt (\(error.code))")
        }
        // Only the Server API's app can be asked about: its tokens name one bundle.
        guard bundleRule.verdict(for: receipt.bundleID, whenUnconfigured: .acceptAny) == .accepted,
            receipt.bundleID == client.configuration.credentials.bundleID
        else {
            logger.notice("receipt of another bundle", metadata: ["receipt.bundle_id": "\(receipt.bundleID ?? "")"])
            throw VerifyFailure.bundleMismatch(bundleID: receipt.bundleID ?? "").serviceFailure
        }
        if Self.isSandbox(receipt), !acceptSandbox {
            logger.info("sandbox receipt refused (STOREKEEPER_ACCEPT_SANDBOX=false)")
            throw VerifyFailure.sandboxNotAccepted.serviceFailure
        }
        return receipt
    }

    /// The receipt's purchases the history left out, each asked for alone; how many were asked.
    private func addMissing(
        _ receipt: AppReceipt, to byID: inout [String: Transaction], in environment: AppleEnvironment,
        deadline: ContinuousClock.Instant, logger: Logger
    ) async throws(ServiceFailure) -> Int {
        var seen = Set(byID.keys)
        let missing = receipt.inAppPurchases.compactMap { $0.transactionID ?? $0.originalTransactionID }
            .filter { seen.insert($0).inserted }
        if missing.count > Self.maximumSingleLookups {
            logger.notice(
                "receipt lists more purchases missing from Apple's history than are looked up alone; the rest are not credited",
                metadata: ["receipt.missing": "\(missing.count)"])
        }
        for id in missing.prefix(Self.maximumSingleLookups) {
            do {
                for transaction in try await client.transactionInfo(id, environment: environment, deadline: deadline).transactions {
                    byID[transaction.transactionID] = transaction
                }
            } catch where error.isNotFound {
                logger.notice("a purchase the receipt lists is unknown to Apple; not credited")
            } catch {
                throw error.serviceFailure
            }
        }
        return min(missing.count, Self.maximumSingleLookups)
    }

    /// Each subscription's renewal info, from Get All Subscription Statuses, when there is a subscription.
    private func renewals(
        of transactions: [Transaction], in environment: AppleEnvironment, deadline: ContinuousClock.Instant,
        _ logger: Logger
    ) async throws(ServiceFailure) -> [PendingRenewal] {
        guard let subscription = transactions.first(where: { $0.kind == .autoRenewable || $0.hasExpiresDateMs }) else {
            return []
        }
        let statuses = try await call(logger) { () throws(ServerAPIError) in
            try await client.subscriptionStatuses(subscription.originalTransactionID, environment: environment, deadline: deadline)
        }
        let originals = Set(transactions.map(\.originalTransactionID))
        return statuses.subscriptions.compactMap { status in
            originals.contains(status.originalTransactionID) ? status.renewal : nil
        }
    }

    private func call<T>(
        _ logger: Logger, _ body: () async throws(ServerAPIError) -> T
    ) async throws(ServiceFailure) -> T {
        do {
            return try await body()
        } catch {
            logger.info("receipt not read from the App Store Server API", metadata: ["failure": "\(error)"])
            throw error.serviceFailure
        }
    }

    /// The receipt's own word (unsigned): used only to refuse, never to credit.
    static func isSandbox(_ receipt: AppReceipt) -> Bool {
        receipt.receiptType?.hasSuffix("Sandbox") == true
    }
}

/// Behind `ReceiptVerifier`: its cap, coalescing, metrics and log context.
extension ServerAPIReceiptReader: ReceiptBackend {
    var checksSignatures: Bool { true }

    /// The receipt alone: the history is read the same whatever `exclude_old_transactions`
    /// and the start environment say (production first, sandbox on 4040010), so a client's
    /// request and the ledger's refresh of the same receipt share one read.
    func coalescingKey(_ request: VerifyRequest, digest: String) -> ReceiptCoalescingKey {
        ReceiptCoalescingKey(receiptSHA256: digest)
    }

    func verify(
        _ request: VerifyRequest, digest: String, deadline: ContinuousClock.Instant, logger: Logger
    ) async -> Result<VerifyResult, VerifyFailure> {
        do {
            return .success(try await read(request, digest: digest, deadline: deadline, logger: logger))
        } catch {
            return .failure(.serverAPI(error))
        }
    }
}
