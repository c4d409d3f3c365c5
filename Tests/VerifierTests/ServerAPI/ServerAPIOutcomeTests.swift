import AppleFormats
import CurlHTTP
import Foundation
import Testing

@testable import Verifier

/// Apple's answers as the state machine sees them (Apple's error bodies from
/// app-store-server-library-swift's test resources), and the one table from
/// the client's errors to the spec's codes.
@Suite struct ServerAPIOutcomeTests {
    static func answer(_ status: Int, _ body: String = "", retryAfter: String? = nil) -> HTTPResponse {
        HTTPResponse(status: status, headers: retryAfter.map { [("Retry-After", $0)] } ?? [], body: Array(body.utf8))
    }

    static let now: Int64 = 1_700_000_000_000

    @Test func everyClassOfAnswer() {
        let cases: [(HTTPResponse, ServerAPIOutcome)] = [
            (Self.answer(200, "{}"), .answered(Array("{}".utf8))),
            (Self.answer(202), .answered([])),
            (Self.answer(401, "Unauthenticated"), .unauthorized),
            (
                Self.answer(404, #"{"errorCode": 4040010, "errorMessage": "Transaction id not found."}"#),
                .notFound(.transactionIdNotFound)
            ),
            (Self.answer(404, #"{"errorCode": 4040005}"#), .notFound(.originalTransactionIdNotFound)),
            (Self.answer(404, #"{"errorCode": 4040002}"#), .unavailable(status: 404, retryAfter: nil)),
            (Self.answer(404, "Not Found"), .rejected(status: 404, code: nil, message: nil)),
            (
                Self.answer(429, #"{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}"#, retryAfter: "2"),
                .rateLimited(retryAfter: .seconds(2))
            ),
            (Self.answer(500, #"{"errorCode": 5000000, "errorMessage": "An unknown error occurred."}"#), .unavailable(status: 500, retryAfter: nil)),
            (Self.answer(500, #"{"errorCode": 5000001}"#), .unavailable(status: 500, retryAfter: nil)),
            (Self.answer(503, "Service Unavailable", retryAfter: "5"), .unavailable(status: 503, retryAfter: .seconds(5))),
            (
                Self.answer(400, #"{"errorCode": 4000006, "errorMessage": "Invalid transaction id."}"#),
                .rejected(status: 400, code: .invalidTransactionId, message: "Invalid transaction id.")
            ),
            (Self.answer(403, #"{"errorCode": 4030004}"#), .rejected(status: 403, code: .subscriptionExtensionIneligible, message: nil)),
            (Self.answer(302), .unavailable(status: 302, retryAfter: nil)),
        ]
        for (response, outcome) in cases {
            #expect(ServerAPIOutcome.classify(response, nowMs: Self.now) == outcome, "\(response.status)")
        }
        #expect(ServerAPIOutcome.classify(HTTPClientError.timedOut) == .transportFailed(.timedOut))
    }

    @Test func retryAfterInSecondsOrAsAUnixTime() {
        #expect(ServerAPIOutcome.retryAfter("3", nowMs: Self.now) == .seconds(3))
        #expect(ServerAPIOutcome.retryAfter(" 0 ", nowMs: Self.now) == .zero)
        #expect(ServerAPIOutcome.retryAfter(String(Self.now + 1_500), nowMs: Self.now) == .milliseconds(1_500))
        #expect(ServerAPIOutcome.retryAfter(String(Self.now / 1_000 + 4), nowMs: Self.now) == .seconds(4))
        #expect(ServerAPIOutcome.retryAfter(String(Self.now - 10), nowMs: Self.now) == .zero, "a time past: at once")
        #expect(ServerAPIOutcome.retryAfter("86400", nowMs: Self.now) == .seconds(3_600), "at most an hour")
        #expect(ServerAPIOutcome.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", nowMs: Self.now) == nil)
        #expect(ServerAPIOutcome.retryAfter(nil, nowMs: Self.now) == nil)
        #expect(ServerAPIOutcome.retryAfter("-1", nowMs: Self.now) == nil)
    }

    @Test func applesCodesTable() {
        #expect(ServerAPIErrorCode.transactionIdNotFound.name == "TransactionIdNotFoundError")
        #expect(ServerAPIErrorCode.transactionIdNotFound.isTransactionNotFound)
        #expect(!ServerAPIErrorCode.testNotificationNotFound.isTransactionNotFound)
        #expect(ServerAPIErrorCode(rawValue: 4_040_006).kind == .retryable)
        #expect(ServerAPIErrorCode(rawValue: 1).kind == .badRequest)
        #expect(ServerAPIErrorCode(rawValue: 1).name == "UnknownError")
        #expect(ServerAPIErrorCode.rateLimitExceeded.description == "4290000 RateLimitExceededError")
    }

    @Test func theOneTableToTheSpecsCodes() {
        let cases: [(ServerAPIError, String, Bool)] = [
            (.unauthorized, "apple_rejected_request", false),
            (.notFound(.transactionIdNotFound), "receipt_invalid", false),
            (.unavailable(retryAfter: .seconds(3), httpStatus: 503), "apple_unavailable", true),
            (.rejected(status: 400, code: .invalidTransactionId, message: nil), "apple_rejected_request", false),
            (.sandboxNotAccepted, "sandbox_not_accepted", false),
            (.answerInvalid(SignedDataReader.invalid("x")), "receipt_invalid", false),
            (.cancelled, "deadline_exceeded", false),
        ]
        for (error, code, retryable) in cases {
            #expect(error.serviceFailure.code == code, "\(error)")
            #expect(error.serviceFailure.retryable == retryable, "\(error)")
            #expect(error.isRetryable == retryable, "\(error)")
        }
        #expect(ServerAPIError.unavailable(retryAfter: .seconds(3), httpStatus: nil).serviceFailure.retryAfterMs == 3_000)
        #expect(Set([ServerAPIError.unauthorized, .sandboxNotAccepted, .cancelled].map(\.description)).count == 3)
    }
}
