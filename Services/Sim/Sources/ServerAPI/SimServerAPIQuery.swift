import AppleFormats

/// The Server API's read-only calls about purchases, as the simulator's router hands them over.
enum SimServerAPIQuery: Sendable, Equatable {
    case transactionInfo(String)
    case transactionHistory(String, revision: String?)
    case refundHistory(String, revision: String?)
    case subscriptionStatuses(String)
    case orderLookup(String)
}
