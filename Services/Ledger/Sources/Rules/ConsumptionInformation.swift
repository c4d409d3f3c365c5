import Contracts

/// What Storekeeper tells Apple when a customer asks for a refund
/// (CONSUMPTION_REQUEST), from the ledger's own records only; what it does
/// not know is Apple's "undeclared" (0), never a guess:
/// - `customerConsented`: true. Apple refuses anything else; turning
///   `STOREKEEPER_SEND_CONSUMPTION_INFO` on is the operator's statement that
///   its customers consented (in its terms) to sharing this data;
/// - `deliveryStatus`: 0 (delivered and working) when the ledger had credited
///   the transaction to a user before the request; 5 (not delivered, other
///   reason) when it never had: the app delivers what Storekeeper credits;
/// - `accountTenure`: from the first time the ledger bound a purchase to the
///   purchase's user; 0 when nobody holds the purchase;
/// - `appAccountToken`: the transaction's, as Apple signed it;
/// - `sampleContentProvided`: false: the ledger knows of no sample;
/// - `lifetimeDollarsPurchased` and `lifetimeDollarsRefunded`: the user's
///   credited purchases in the environment and the refunded ones, at the
///   prices Apple signed (StoreKit 2), in Apple's ranges; undeclared when one
///   of them has no price (seen through verifyReceipt only) or is priced in
///   another currency than USD (the ledger converts no money);
/// - consumption, platform, play time, user status, refund preference: 0,
///   undeclared.
enum ConsumptionInformation {
    static let dayMs: Int64 = 86_400_000

    /// Apple's DeliveryStatus.
    static let delivered: Int32 = 0
    static let notDeliveredOtherReason: Int32 = 5

    static func request(
        for transaction: Transaction, in environment: AppleEnvironment, credited: Bool, firstBoundAtMs: Int64?,
        spend: LifetimeSpend?, now: Int64
    ) -> ConsumptionInfoRequest {
        ConsumptionInfoRequest.with {
            $0.transactionID = transaction.transactionID
            $0.environment = environment
            $0.customerConsented = true
            $0.deliveryStatus = credited ? delivered : notDeliveredOtherReason
            $0.appAccountToken = transaction.appAccountToken
            $0.accountTenure = accountTenure(ageMs: firstBoundAtMs.map { now - $0 })
            $0.sampleContentProvided = false
            if let dollars = spend.flatMap(usd) {
                $0.lifetimeDollarsPurchased = lifetimeDollars(milliunits: dollars.purchasedMilliunits)
                $0.lifetimeDollarsRefunded = lifetimeDollars(milliunits: dollars.refundedMilliunits)
            }
        }
    }

    /// The spend in US dollars, when every purchase of it is priced in them.
    static func usd(_ spend: LifetimeSpend) -> LifetimeSpend.Amounts? {
        guard spend.unpriced == 0, spend.byCurrency.keys.allSatisfy({ $0 == "USD" }) else { return nil }
        return spend.byCurrency["USD"] ?? LifetimeSpend.Amounts(purchasedMilliunits: 0, refundedMilliunits: 0)
    }

    /// Apple's LifetimeDollarsPurchased / LifetimeDollarsRefunded for an amount
    /// in thousandths of a dollar: 1 for none, 2 up to $49.99, 3 to $99.99, 4 to
    /// $499.99, 5 to $999.99, 6 to $1,999.99, 7 beyond.
    static func lifetimeDollars(milliunits: Int64) -> Int32 {
        guard milliunits > 0 else { return 1 }
        let bounds: [Int64] = [50_000, 100_000, 500_000, 1_000_000, 2_000_000]
        let bucket = bounds.firstIndex { milliunits < $0 } ?? bounds.count
        return Int32(bucket + 2)
    }

    /// Apple's AccountTenure for an account first seen `ageMs` ago: 1 for up
    /// to 3 days, 2 to 10, 3 to 30, 4 to 90, 5 to 180, 6 to 365, 7 beyond; 0 unknown.
    static func accountTenure(ageMs: Int64?) -> Int32 {
        guard let ageMs, ageMs >= 0 else { return 0 }
        let bounds: [Int64] = [3, 10, 30, 90, 180, 365]
        let bucket = bounds.firstIndex { ageMs < $0 * dayMs } ?? bounds.count
        return Int32(bucket + 1)
    }
}
