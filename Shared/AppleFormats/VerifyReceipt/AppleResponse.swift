import Contracts
import Foundation

/// One verifyReceipt answer body, read leniently: the status (a number or a
/// string), Apple's retry hint under either spelling, and the decoded receipt
/// when the status says there is one.
public struct AppleResponse: Sendable {
    public let status: Int
    /// `is-retryable` or `is_retryable`, as a boolean or 0/1; nil when absent.
    public let isRetryable: Bool?
    public let body: JSONValue

    /// A body that is not a JSON object with a status: a proxy's error page,
    /// a truncated answer. Treated like a failed call (retried), never as invalid.
    public struct Unreadable: Error, Equatable, CustomStringConvertible {
        public var description: String { "Apple's answer is not a verifyReceipt body" }
    }

    public init(body bytes: [UInt8]) throws(Unreadable) {
        guard let body = try? JSONValueParser.parse(bytes) else { throw Unreadable() }
        try self.init(json: body)
    }

    /// An answer already parsed (a notification's `unified_receipt` has the same shape).
    public init(json body: JSONValue) throws(Unreadable) {
        guard body.object != nil, let status = body["status"]?.int64, let narrowed = Int(exactly: status)
        else { throw Unreadable() }
        self.body = body
        self.status = narrowed
        self.isRetryable = (body["is-retryable"] ?? body["is_retryable"])?.bool
    }

    public var statusClass: AppleStatusClass {
        AppleStatus.classify(status, isRetryable: isRetryable)
    }
}
