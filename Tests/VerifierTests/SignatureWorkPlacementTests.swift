import Contracts
import Testing

@testable import Verifier

/// A pool request runs on the curl loop's thread unless it checks signatures:
/// only a receipt read through verifyReceipt stays there.
@Suite struct SignatureWorkPlacementTests {
    static let bodies: [(Envelope.OneOf_Body, checksWithVerifyReceipt: Bool)] = [
        (.verifyRequest(.with { $0.receiptData = "MIIT" }), false),
        (.signedTransactionRequest(.with { $0.signedTransaction = "a.b.c" }), true),
        (.signedNotificationRequest(.with { $0.signedPayload = "a.b.c" }), true),
        (.transactionIDRequest(.with { $0.transactionID = "1000" }), true),
    ]

    @Test func onlyAVerifyReceiptReadStaysOnTheLoop() {
        for (body, checks) in Self.bodies {
            #expect(VerifyRequestHandler.checksSignatures(body, receiptsCheckSignatures: false) == checks, "\(body)")
        }
    }

    @Test func receiptsReadFromTheServerAPIsSignedHistoryMoveOff() {
        for (body, _) in Self.bodies {
            #expect(VerifyRequestHandler.checksSignatures(body, receiptsCheckSignatures: true), "\(body)")
        }
        #expect(VerifyRequestHandler.checksSignatures(nil, receiptsCheckSignatures: false))
    }
}
