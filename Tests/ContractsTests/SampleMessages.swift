import Contracts
import Foundation
import SwiftProtobuf

/// One instance of every contract message with every field set to a
/// non-default value, so a round trip that drops a field shows.
enum SampleMessages {
    static var transaction: Transaction {
        var t = Transaction()
        t.transactionID = "1000000595277992"
        t.originalTransactionID = "1000000595277990"
        t.productID = "com.example.pro.monthly"
        t.quantity = 2
        t.purchaseDateMs = 1_574_316_980_000
        t.originalPurchaseDateMs = 1_574_316_900_000
        t.expiresDateMs = 1_574_317_280_000
        t.cancellationDateMs = 1_574_318_000_000
        t.cancellationReason = 1
        t.isTrialPeriod = true
        t.isInIntroOfferPeriod = true
        t.isUpgraded = true
        t.webOrderLineItemID = "1000000048506301"
        t.subscriptionGroupIdentifier = "20516581"
        t.ownershipType = .familyShared
        t.offerCodeRefName = "SPRING"
        t.promotionalOfferID = "promo-1"
        t.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        t.priceMilliunits = 9_990
        t.currency = "USD"
        t.kind = .autoRenewable
        return t
    }

    static var pendingRenewal: PendingRenewal {
        var p = PendingRenewal()
        p.originalTransactionID = "1000000595277990"
        p.productID = "com.example.pro.monthly"
        p.autoRenewProductID = "com.example.pro.yearly"
        p.autoRenewStatus = false
        p.expirationIntent = 1
        p.isInBillingRetryPeriod = true
        p.gracePeriodExpiresDateMs = 1_574_400_000_000
        p.priceConsentStatus = 0
        p.offerCodeRefName = "SPRING"
        return p
    }

    static var verifyRequest: VerifyRequest {
        var r = VerifyRequest()
        r.receiptData = "MIIT+/base64=="
        r.excludeOldTransactions = true
        r.startEnvironment = .sandbox
        r.ledgerHandoff = ledgerHandoff
        return r
    }

    static var ledgerHandoff: LedgerHandoff {
        .with {
            $0.userID = "u-42"
            $0.gatewayRoute = Data("gateway-0123456789abcdef".utf8)
            $0.recordDeadlineMs = 1_574_316_035_000
            $0.ledgerEndpoints = ["tcp://ledger-1:7422", "tcp://ledger-2:7422"]
        }
    }

    static var recordedReceipt: RecordedReceipt {
        .with {
            $0.outcome = recordOutcome
            $0.context = answerContext
            $0.style = .ios7
            $0.receiptSha256 = String(repeating: "cd", count: 32)
        }
    }

    static var verifyResult: VerifyResult {
        var r = VerifyResult()
        r.environment = .sandbox
        r.appleStatus = 21006
        r.style = .ios7
        r.bundleID = "com.example.app"
        r.applicationVersion = "42"
        r.originalApplicationVersion = "1.0"
        r.receiptCreationDateMs = 1_574_316_000_000
        r.requestDateMs = 1_574_319_000_000
        r.transactions = [transaction, transaction]
        r.transactions[1].transactionID = "1000000595277993"
        r.pendingRenewals = [pendingRenewal]
        r.latestReceipt = "MIIU..."
        r.receiptSha256 = String(repeating: "ab", count: 32)
        return r
    }

    static var grant: Grant {
        var g = Grant()
        g.transactionID = "1000000595277992"
        g.originalTransactionID = "1000000595277990"
        g.productID = "com.example.pro.monthly"
        g.quantity = 1
        g.purchaseDateMs = 1_574_316_980_000
        g.expiresDateMs = 1_574_317_280_000
        return g
    }

    static var revocation: Revocation {
        var r = Revocation()
        r.transactionID = "1000000595277993"
        r.cancellationDateMs = 1_574_318_000_000
        return r
    }

    static var entitlement: Entitlement {
        var e = Entitlement()
        e.productID = "com.example.pro.monthly"
        e.originalTransactionID = "1000000595277990"
        e.environment = .sandbox
        e.expiresDateMs = 1_574_324_473_000
        e.active = true
        e.autoRenew = true
        e.state = .grace
        e.kind = .autoRenewable
        e.autoRenewProductID = "com.example.pro.yearly"
        e.autoRenewAccess = ["pro", "archive"]
        return e
    }

    static var access: Access {
        Access.with {
            $0.name = "pro"
            $0.active = true
            $0.productID = "com.example.pro.monthly"
            $0.expiresDateMs = 1_574_324_473_000
        }
    }

    static var recordRequest: RecordRequest {
        var r = RecordRequest()
        r.userID = "u-42"
        r.result = verifyResult
        r.idempotency = idempotencyKey
        r.answerContext = answerContext
        return r
    }

    static var idempotencyKey: IdempotencyKey {
        IdempotencyKey.with {
            $0.scope = String(repeating: "5e", count: 32)
            $0.key = "order-1234"
            $0.requestSha256 = String(repeating: "a1", count: 32)
        }
    }

    static var answerContext: AnswerContext {
        AnswerContext.with {
            $0.environment = .sandbox
            $0.bundleID = "com.example.app"
            $0.appleStatus = 21006
            $0.transactionID = "1000000595277992"
            $0.transactionFound = true
        }
    }

    static var idempotencyLookup: IdempotencyLookup { .with { $0.key = idempotencyKey } }

    static var idempotencyAnswer: IdempotencyAnswer { .with { $0.outcome = recordOutcome } }

    static var transactionsQuery: TransactionsQuery {
        TransactionsQuery.with {
            $0.userID = "u-42"
            $0.after = "NDIuU2FuZGJveC4xMDAw"
            $0.limit = 20
        }
    }

    static var transactionsPage: TransactionsPage {
        TransactionsPage.with {
            $0.userID = "u-42"
            $0.transactions = [
                .with {
                    $0.transactionID = "1000000595277992"
                    $0.originalTransactionID = "1000000595277990"
                    $0.productID = "com.example.pro.monthly"
                    $0.state = .revoked
                    $0.environment = .sandbox
                    $0.purchaseDateMs = 1_574_316_980_000
                    $0.seq = 42
                }
            ]
            $0.next = "NDEuU2FuZGJveC45OTk"
        }
    }

    static var recordOutcome: RecordOutcome {
        var o = RecordOutcome()
        o.userID = "u-42"
        o.granted = [grant]
        o.alreadyGranted = ["1000000595277991"]
        o.revoked = [revocation]
        o.entitlements = [entitlement]
        o.access = [access]
        o.accessListed = true
        o.answerContext = answerContext
        o.replayed = true
        return o
    }

    static var notificationApply: NotificationApply {
        var n = NotificationApply()
        n.notificationID = "f0e1d2c3"
        n.version = .v1
        n.notificationType = "DID_RENEW"
        n.subtype = "BILLING_RECOVERY"
        n.environment = .production
        n.bundleID = "com.example.app"
        n.originalTransactionID = "1000000595277990"
        n.autoRenewStatus = true
        n.autoRenewProductID = "com.example.pro.yearly"
        n.autoRenewStatusChangeDateMs = 1_574_316_000_000
        n.transactions = [transaction]
        n.pendingRenewals = [pendingRenewal]
        n.latestReceipt = "MIIU..."
        n.signedDateMs = 1_574_316_000_001
        n.receivedAtMs = 1_574_316_000_002
        n.subjectUnknown = true
        return n
    }

    static var signedTransactionRequest: SignedTransactionRequest {
        SignedTransactionRequest.with { $0.signedTransaction = "eyJhbGciOiJFUzI1NiJ9.e30.c2ln" }
    }

    static var transactionIDRequest: TransactionIDRequest {
        TransactionIDRequest.with { $0.transactionID = "2000000123456789" }
    }

    static var subscriptionStatusRequest: SubscriptionStatusRequest {
        SubscriptionStatusRequest.with {
            $0.originalTransactionID = "2000000123456700"
            $0.environment = .sandbox
        }
    }

    static var notificationHistoryQuery: NotificationHistoryQuery {
        NotificationHistoryQuery.with {
            $0.environment = .sandbox
            $0.startMs = 1_574_316_000_000
            $0.endMs = 1_574_317_000_000
        }
    }

    static var notificationHistoryPage: NotificationHistoryPage {
        NotificationHistoryPage.with { $0.notifications = [notificationApply] }
    }

    static var consumptionInfoRequest: ConsumptionInfoRequest {
        ConsumptionInfoRequest.with {
            $0.transactionID = "2000000123456789"
            $0.environment = .sandbox
            $0.customerConsented = true
            $0.consumptionStatus = 2
            $0.platform = 1
            $0.sampleContentProvided = true
            $0.deliveryStatus = 5
            $0.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
            $0.accountTenure = 3
            $0.playTime = 4
            $0.lifetimeDollarsRefunded = 1
            $0.lifetimeDollarsPurchased = 2
            $0.userStatus = 1
            $0.refundPreference = 2
        }
    }

    static var consumptionInfoSent: ConsumptionInfoSent {
        ConsumptionInfoSent.with { $0.environment = .sandbox }
    }

    static var signedNotificationRequest: SignedNotificationRequest {
        SignedNotificationRequest.with {
            $0.signedPayload = "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"
            $0.receivedAtMs = 1_574_316_000_003
        }
    }

    static var notificationOutcome: NotificationOutcome {
        var o = NotificationOutcome()
        o.applied = true
        return o
    }

    static var entitlementsQuery: EntitlementsQuery {
        var q = EntitlementsQuery()
        q.userID = "u-42"
        q.atMs = 1_574_316_000_000
        return q
    }

    static var entitlementsAnswer: EntitlementsAnswer {
        var a = EntitlementsAnswer()
        a.userID = "u-42"
        a.entitlements = [entitlement]
        a.access = [access]
        a.accessListed = true
        return a
    }

    static var transactionRevoked: TransactionRevoked {
        var r = TransactionRevoked()
        r.transactionID = "1000000595277993"
        r.originalTransactionID = "1000000595277990"
        r.productID = "com.example.pro.monthly"
        r.cancellationDateMs = 1_574_318_000_000
        r.cancellationReason = 0
        return r
    }

    static var subscriptionRenewed: SubscriptionRenewed {
        var r = SubscriptionRenewed()
        r.originalTransactionID = "1000000595277990"
        r.productID = "com.example.pro.monthly"
        r.previousExpiresDateMs = 1_574_317_280_000
        r.expiresDateMs = 1_574_317_580_000
        return r
    }

    static var subscriptionChanged: SubscriptionChanged {
        var c = SubscriptionChanged()
        c.originalTransactionID = "1000000595277990"
        c.entitlement = entitlement
        c.changed = ["auto_renew", "grace", "product"]
        c.change = "downgrade_queued"
        c.fromProductID = "com.example.pro.yearly"
        c.toProductID = "com.example.pro.monthly"
        c.effectiveDateMs = 1_574_324_473_000
        return c
    }

    static var subscriptionExpired: SubscriptionExpired {
        var e = SubscriptionExpired()
        e.originalTransactionID = "1000000595277990"
        e.productID = "com.example.pro.monthly"
        e.expiresDateMs = 1_574_317_580_000
        e.expirationIntent = 1
        return e
    }

    static var bindingTransferred: BindingTransferred {
        var b = BindingTransferred()
        b.originalTransactionID = "1000000595277990"
        b.fromUserID = "u-1"
        b.toUserID = "u-2"
        return b
    }

    static func ledgerEvent(_ payload: LedgerEvent.OneOf_Payload, seq: UInt64) -> LedgerEvent {
        var e = LedgerEvent()
        e.seq = seq
        e.topic = "transaction.granted"
        e.occurredAtMs = 1_574_316_000_000
        e.requestID = "req-1"
        e.userID = "u-42"
        e.environment = .production
        e.payload = payload
        return e
    }

    static var replayRequest: ReplayRequest {
        var r = ReplayRequest()
        r.afterSeq = 41
        r.maxEvents = 500
        return r
    }

    static var replayBatch: ReplayBatch {
        var b = ReplayBatch()
        b.events = [ledgerEvent(.transactionGranted(TransactionGranted.with { $0.grant = grant }), seq: 42)]
        b.headSeq = 99
        b.oldestRetainedSeq = 7
        b.more = true
        return b
    }

    static var serviceFailure: ServiceFailure {
        ServiceFailure(.appleUnavailable, message: "Apple did not answer", appleStatus: 21005, retryable: true,
                       retryAfterMilliseconds: 2_000)
    }

    /// Every envelope body, each one set.
    static var envelopeBodies: [Envelope.OneOf_Body] {
        [
            .verifyRequest(verifyRequest), .verifyResult(verifyResult), .recordRequest(recordRequest),
            .recordOutcome(recordOutcome), .notificationApply(notificationApply),
            .notificationOutcome(notificationOutcome), .entitlementsQuery(entitlementsQuery),
            .entitlementsAnswer(entitlementsAnswer), .replayRequest(replayRequest), .replayBatch(replayBatch),
            .signedTransactionRequest(signedTransactionRequest), .transactionIDRequest(transactionIDRequest),
            .signedNotificationRequest(signedNotificationRequest),
            .idempotencyLookup(idempotencyLookup), .idempotencyAnswer(idempotencyAnswer),
            .transactionsQuery(transactionsQuery), .transactionsPage(transactionsPage), .failure(serviceFailure),
            .subscriptionStatusRequest(subscriptionStatusRequest), .notificationHistoryQuery(notificationHistoryQuery),
            .notificationHistoryPage(notificationHistoryPage), .consumptionInfoRequest(consumptionInfoRequest),
            .consumptionInfoSent(consumptionInfoSent), .recordedReceipt(recordedReceipt),
        ]
    }

    /// Every event payload, each one set.
    static var eventPayloads: [LedgerEvent.OneOf_Payload] {
        [
            .transactionGranted(TransactionGranted.with { $0.grant = grant }),
            .transactionRevoked(transactionRevoked), .subscriptionRenewed(subscriptionRenewed),
            .subscriptionChanged(subscriptionChanged), .subscriptionExpired(subscriptionExpired),
            .bindingTransferred(bindingTransferred),
        ]
    }

    /// One of every message type of the contracts.
    static var all: [any SwiftProtobuf.Message] {
        var messages: [any SwiftProtobuf.Message] = [
            transaction, pendingRenewal, verifyRequest, verifyResult, grant, revocation, entitlement,
            recordRequest, recordOutcome, notificationApply, notificationOutcome, entitlementsQuery,
            entitlementsAnswer, replayRequest, replayBatch, serviceFailure, signedTransactionRequest, transactionIDRequest,
            signedNotificationRequest, access, idempotencyKey, answerContext, idempotencyLookup, idempotencyAnswer,
            transactionsQuery, transactionsPage, transactionsPage.transactions[0],
            TransactionGranted.with { $0.grant = grant }, transactionRevoked, subscriptionRenewed,
            subscriptionChanged, subscriptionExpired, bindingTransferred, subscriptionStatusRequest,
            notificationHistoryQuery, notificationHistoryPage, consumptionInfoRequest, consumptionInfoSent,
            ledgerHandoff, recordedReceipt,
        ]
        messages += envelopeBodies.map {
            Envelope(requestID: "req-1", deadlineMilliseconds: 1_574_316_030_000, body: $0)
        }
        messages += eventPayloads.enumerated().map { ledgerEvent($1, seq: UInt64($0 + 1)) }
        return messages
    }
}
