/// An App Store Server API `errorCode`, and the one table of the codes
/// Storekeeper acts on: each with Apple's name (its documentation's
/// `...Error` object) and what kind of trouble it is. A code that is not in
/// the table keeps its number and counts as a refused request.
public struct ServerAPIErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// What a code means for the caller.
    public enum Kind: Sendable, Equatable {
        /// The request is wrong (a parameter, a token, a body): sending it again changes nothing.
        case badRequest
        /// The transaction, original transaction or test notification is unknown in the environment asked.
        case notFound
        /// Apple says the same request may succeed later (its `...RetryableError` codes).
        case retryable
        /// Over Apple's rate limit (HTTP 429).
        case rateLimited
        /// Apple's own failure (HTTP 500).
        case appleFailure
        /// Apple refuses it for this purchase (HTTP 403), e.g. a subscription that cannot be extended.
        case forbidden
    }

    public let rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }

    private struct Entry {
        let name: String
        let kind: Kind
        let message: String
    }

    private static let table: [Int64: Entry] = [
        4_000_000: Entry(name: "GeneralBadRequestError", kind: .badRequest, message: "Bad request."),
        4_000_002: Entry(name: "InvalidAppIdentifierError", kind: .badRequest, message: "Invalid request app identifier."),
        4_000_005: Entry(name: "InvalidRequestRevisionError", kind: .badRequest, message: "Invalid request revision."),
        4_000_006: Entry(name: "InvalidTransactionIdError", kind: .badRequest, message: "Invalid transaction id."),
        4_000_008: Entry(name: "InvalidOriginalTransactionIdError", kind: .badRequest, message: "Invalid original transaction id."),
        4_000_009: Entry(name: "InvalidExtendByDaysError", kind: .badRequest, message: "Invalid extend by days value."),
        4_000_010: Entry(name: "InvalidExtendReasonCodeError", kind: .badRequest, message: "Invalid extend reason code."),
        4_000_011: Entry(name: "InvalidRequestIdentifierError", kind: .badRequest, message: "Invalid request identifier."),
        4_000_014: Entry(name: "InvalidPaginationTokenError", kind: .badRequest, message: "Invalid pagination token."),
        4_000_015: Entry(name: "InvalidStartDateError", kind: .badRequest, message: "Invalid start date."),
        4_000_016: Entry(name: "InvalidEndDateError", kind: .badRequest, message: "Invalid end date."),
        4_000_017: Entry(name: "PaginationTokenExpiredError", kind: .badRequest, message: "Pagination token expired."),
        4_000_020: Entry(name: "InvalidTestNotificationTokenError", kind: .badRequest, message: "Invalid test notification token."),
        4_000_035: Entry(name: "InvalidCustomerConsentedError", kind: .badRequest, message: "Invalid customer consented value."),
        4_030_004: Entry(name: "SubscriptionExtensionIneligibleError", kind: .forbidden, message: "Subscription extension ineligible."),
        4_030_005: Entry(name: "SubscriptionMaxExtensionError", kind: .forbidden, message: "Subscription max extension reached."),
        4_040_001: Entry(name: "AccountNotFoundError", kind: .notFound, message: "Account not found."),
        4_040_002: Entry(name: "AccountNotFoundRetryableError", kind: .retryable, message: "Account not found. Please try again."),
        4_040_003: Entry(name: "AppNotFoundError", kind: .notFound, message: "App not found."),
        4_040_004: Entry(name: "AppNotFoundRetryableError", kind: .retryable, message: "App not found. Please try again."),
        4_040_005: Entry(name: "OriginalTransactionIdNotFoundError", kind: .notFound, message: "Original transaction id not found."),
        4_040_006: Entry(
            name: "OriginalTransactionIdNotFoundRetryableError", kind: .retryable,
            message: "Original transaction id not found. Please try again."),
        4_040_007: Entry(name: "ServerNotificationURLNotFoundError", kind: .notFound, message: "No App Store Server Notification URL found."),
        4_040_008: Entry(name: "TestNotificationNotFoundError", kind: .notFound, message: "Either the test notification token is expired or the notification and status are not yet available."),
        4_040_010: Entry(name: "TransactionIdNotFoundError", kind: .notFound, message: "Transaction id not found."),
        4_290_000: Entry(name: "RateLimitExceededError", kind: .rateLimited, message: "Rate limit exceeded."),
        5_000_000: Entry(name: "GeneralInternalError", kind: .appleFailure, message: "An unknown error occurred."),
        5_000_001: Entry(name: "GeneralInternalRetryableError", kind: .retryable, message: "An unknown error occurred. Please try again."),
    ]

    public static let generalBadRequest = Self(rawValue: 4_000_000)
    public static let invalidRequestRevision = Self(rawValue: 4_000_005)
    public static let invalidTransactionId = Self(rawValue: 4_000_006)
    public static let invalidExtendByDays = Self(rawValue: 4_000_009)
    public static let invalidExtendReasonCode = Self(rawValue: 4_000_010)
    public static let invalidRequestIdentifier = Self(rawValue: 4_000_011)
    public static let invalidPaginationToken = Self(rawValue: 4_000_014)
    public static let invalidStartDate = Self(rawValue: 4_000_015)
    public static let invalidEndDate = Self(rawValue: 4_000_016)
    public static let invalidCustomerConsented = Self(rawValue: 4_000_035)
    public static let subscriptionExtensionIneligible = Self(rawValue: 4_030_004)
    public static let originalTransactionIdNotFound = Self(rawValue: 4_040_005)
    public static let testNotificationNotFound = Self(rawValue: 4_040_008)
    /// The one the production-then-sandbox rule turns on (like verifyReceipt's 21007).
    public static let transactionIdNotFound = Self(rawValue: 4_040_010)
    public static let rateLimitExceeded = Self(rawValue: 4_290_000)
    public static let generalInternal = Self(rawValue: 5_000_000)
    public static let generalInternalRetryable = Self(rawValue: 5_000_001)

    /// Apple's name, e.g. `TransactionIdNotFoundError`; `UnknownError` for a code not in the table.
    public var name: String { Self.table[rawValue]?.name ?? "UnknownError" }

    /// What it means; an unknown code counts as a refused request.
    public var kind: Kind { Self.table[rawValue]?.kind ?? .badRequest }

    /// Apple's message for it (what the simulator answers).
    public var message: String { Self.table[rawValue]?.message ?? "Unknown error." }

    /// A transaction or original transaction unknown in the environment asked:
    /// the other environment may know it.
    public var isTransactionNotFound: Bool { self == .transactionIdNotFound || self == .originalTransactionIdNotFound }

    public var description: String { "\(rawValue) \(name)" }
}
