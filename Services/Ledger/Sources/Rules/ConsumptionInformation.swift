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
/// - consumption, platform, play time, lifetime dollars (the ledger keeps no
///   prices), user status, refund preference: 0, undeclared.
enum ConsumptionInformation {
    static let dayMs: Int64 = 86_400_000

    /// Apple's DeliveryStatus.
    static let delivered: Int32 = 0
    static let notDeliveredOtherReason: Int32 = 5

    static func request(
        for transaction: Transaction, in environment: AppleEnvironment, credited: Bool, firstBoundAtMs: Int64?, now: Int64
    ) -> ConsumptionInfoRequest {
        ConsumptionInfoRequest.with {
            $0.transactionID = transaction.transactionID
            $0.environment = environment
            $0.customerConsented = true
            $0.deliveryStatus = credited ? delivered : notDeliveredOtherReason
            $0.appAccountToken = transaction.appAccountToken
            $0.accountTenure = accountTenure(ageMs: firstBoundAtMs.map { now - $0 })
            $0.sampleContentProvided = false
        }
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
