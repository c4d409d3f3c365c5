import AppleFormats
import AppleJWS
import Contracts
import Foundation
import SeededRandom
import StorekeeperCore
import Testing

@testable import Gateway
@testable import Ledger
@testable import Simulator
@testable import Verifier

/// Random lives of one subscription in the simulator (purchase, upgrades,
/// downgrades, crossgrades, renewals, refunds, auto-renew off and on, expiry),
/// every change reported as Apple reports it: a verifyReceipt answer, the
/// StoreKit 2 signed transaction, and each notification in both versions.
/// Applied to the ledger in Apple's order and in shuffled orders, the
/// entitlement must be what a separate, simple model of Apple's rules gives.
/// Deterministic seeds, bounded sizes, no clocks but the simulator's.
@Suite("Plan changes over the simulator: any arrival order gives Apple's state")
struct SimPlanChangePropertyTests {
    static let t0: Int64 = 1_700_000_000_000
    static let bundle = "com.example.storekeeper"
    /// Products of one group: (id, level, period).
    static let products: [(id: String, level: Int, period: SimPeriod)] = [
        ("gold.month", 1, .month), ("gold.year", 1, .year),
        ("silver.month", 2, .month), ("silver.week", 2, .week), ("silver.year", 2, .year),
        ("bronze.month", 3, .month),
    ]
    static let reader = SignedDataReader(
        verifier: SignedDataVerifier(
            trustedRoots: try! SignedDataVerifier.appleRoots(extraRootsPEM: [SimulatorSigningChain.rootCertificatePEM])),
        bundleIDs: [bundle])

    /// A message as it reached Storekeeper, and when Apple stated it.
    struct Message {
        let at: Int64
        let work: LedgerWork
    }

    // MARK: The model: Apple's rules on plan changes, from the operations alone

    struct Model {
        struct Period {
            var product: String
            var start: Int64
            var end: Int64
            /// When Apple refunded it.
            var refunded: Int64?
        }
        var periods: [Period] = []
        var product: String
        var period: SimPeriod
        var pending: (product: String, period: SimPeriod)?
        var autoRenew = true
        var renewals = 0

        init(product: String, period: SimPeriod, at now: Int64) {
            self.product = product
            self.period = period
            periods = [Period(product: product, start: now, end: now + period.milliseconds(in: .sandbox))]
        }

        /// At once (an upgrade, a crossgrade of the same period): the current period ends now.
        mutating func change(to product: String, _ period: SimPeriod, _ kind: SimPlanChange, at now: Int64) {
            if product == self.product {
                pending = nil
            } else if kind == .upgrade || (kind == .crossgrade && period == self.period) {
                periods[periods.count - 1].end = now
                periods.append(Period(product: product, start: now, end: now + period.milliseconds(in: .sandbox)))
                (self.product, self.period, pending) = (product, period, nil)
            } else {
                pending = (product, period)
            }
            autoRenew = true
        }

        /// Renewals due by `now`: each period starts where the last ended; sandbox stops after five.
        mutating func advance(to now: Int64) {
            while autoRenew, let last = periods.last, last.end <= now {
                if renewals >= 5 {
                    autoRenew = false
                    break
                }
                if let next = pending { (product, period, pending) = (next.product, next.period, nil) }
                periods.append(Period(product: product, start: last.end, end: last.end + period.milliseconds(in: .sandbox)))
                renewals += 1
            }
        }

        /// What gives access: the live period lasting longest; a refund of
        /// what would last longer ends it, at the refund.
        var access: (product: String, expires: Int64, revoked: Bool) {
            let live = periods.filter { $0.refunded == nil }.max { ($0.end, $0.start) < ($1.end, $1.start) }
            let refunded = periods.filter { $0.refunded != nil }.max { $0.end < $1.end }
            if let live, live.end > refunded?.end ?? .min { return (live.product, live.end, false) }
            guard let refunded, let at = refunded.refunded else { return ("", 0, true) }
            return (refunded.product, min(refunded.end, at), true)
        }
    }

    // MARK: One random life, played in the simulator

    /// How the app and its server hear from Apple.
    enum Channels: CaseIterable {
        /// Receipts and version 1 notifications (the old world: superseded transactions flagged `is_upgraded`).
        case verifyReceipt
        /// Signed transactions and version 2 notifications: an upgrade arrives as the new transaction only.
        case storeKit2
        case everything

        var receipts: Bool { self != .storeKit2 }
        var version1: Bool { self != .storeKit2 }
        var signed: Bool { self != .verifyReceipt }
    }

    struct Life {
        var channels: Channels
        var messages: [Message] = []
        var model: Model
        var otid: String
        var end: Int64
    }

    static func play(seed: UInt64, steps: Int, channels: Channels) async throws -> Life {
        var random = SplitMix64(seed: seed)
        let simulator = AppStoreSimulator(bundleID: bundle, sharedSecret: "s", wallClock: { t0 })
        let first = products.randomElement(using: &random)!
        let bought = try simulator.purchase(
            PurchaseRequest(
                account: "a", productID: first.id, type: .autoRenewable, environment: .sandbox, period: first.period,
                level: first.level))
        var life = Life(channels: channels, model: Model(product: first.id, period: first.period, at: t0), otid: bought.originalTransactionID, end: t0)
        var transactionIDs = [bought.transactionID]
        var level = first.level
        try await report(simulator, bought.transactionID, notifications: [], receipt: bought.receiptData, into: &life)

        for _ in 0..<steps {
            var notifications: [SimNotification] = []
            var newTransaction: String?
            switch Int.random(in: 0..<7, using: &random) {
            case 0, 1, 2:
                let kind = SimPlanChange.allCases.randomElement(using: &random)!
                let candidates = products.filter { kind.allows(from: level, to: $0.level) }
                guard let target = candidates.randomElement(using: &random) else { break }
                guard let made = try? simulator.changePlan(
                    PlanChangeRequest(
                        originalTransactionID: life.otid, productID: target.id, kind: kind, period: target.period,
                        level: target.level))
                else { break }
                life.model.change(to: target.id, target.period, kind, at: simulator.now)
                if let id = made.transactionID {
                    transactionIDs.append(id)
                    level = target.level
                }
                notifications = [made.notification]
                newTransaction = made.transactionID
            case 3:
                let minutes = Int64.random(in: 1...12, using: &random)
                notifications = simulator.advanceClock(byMilliseconds: minutes * 60_000)
                life.model.advance(to: simulator.now)
                let renewed = notifications.compactMap { $0.type == "DID_RENEW" ? $0.transactionID : nil }
                transactionIDs += renewed
                if let pendingLevel = products.first(where: { $0.id == life.model.product })?.level { level = pendingLevel }
                newTransaction = renewed.last
            case 4:
                // Apple refunds a transaction once.
                let index = Int.random(in: 0..<transactionIDs.count, using: &random)
                guard life.model.periods[index].refunded == nil else { break }
                notifications = [try simulator.refund(transactionID: transactionIDs[index], reason: 0)]
                life.model.periods[index].refunded = simulator.now
                life.model.autoRenew = false
            default:
                let on = Bool.random(using: &random)
                notifications = (try simulator.setAutoRenew(originalTransactionID: life.otid, enabled: on)).map { [$0] } ?? []
                life.model.autoRenew = on
            }
            // What fell due with it (auto-renew turned on after the period ended renews at once).
            let due = simulator.advanceClock(byMilliseconds: 0)
            life.model.advance(to: simulator.now)
            let dueIDs = due.compactMap { $0.type == "DID_RENEW" ? $0.transactionID : nil }
            transactionIDs += dueIDs
            notifications += due
            newTransaction = dueIDs.last ?? newTransaction
            try await report(simulator, newTransaction, notifications: notifications, receipt: bought.receiptData, into: &life)
            // A second between changes: each statement has its own time, as Apple's do.
            let renewed = simulator.advanceClock(byMilliseconds: 1_000)
            life.model.advance(to: simulator.now)
            transactionIDs += renewed.compactMap { $0.type == "DID_RENEW" ? $0.transactionID : nil }
            try await report(simulator, nil, notifications: renewed, receipt: nil, into: &life)
        }
        life.end = simulator.now
        #expect(transactionIDs.count == life.model.periods.count, "the model and the simulator agree on the periods")
        return life
    }

    /// What Apple sends about the change just made: each notification in both
    /// versions, the new transaction as StoreKit 2 gives it, and a receipt.
    static func report(
        _ simulator: AppStoreSimulator, _ transactionID: String?, notifications: [SimNotification], receipt: String?,
        into life: inout Life
    ) async throws {
        let now = simulator.now
        for notification in notifications {
            let record = try #require(simulator.record(notification))
            if life.channels.signed {
                let body = try #require(simulator.notificationBodyV2(record))
                let payload = try #require(
                    (try JSONSerialization.jsonObject(with: body) as? [String: Any])?["signedPayload"] as? String)
                life.messages.append(Message(at: now, work: .notification(try await reader.notification(payload, receivedAtMs: now))))
            }
            guard life.channels.version1 else { continue }
            let v1 = try #require(simulator.notificationBody(notification, password: "s"))
            guard case .version1(let parsed) = try NotificationBody.read(Array(v1)) else { throw LedgerFixture.Unexpected() }
            life.messages.append(Message(at: now, work: .notification(
                try NotificationV1Decoder.decode(parsed, bytes: Array(v1), sharedSecret: Secret("s"), bundleIDs: [], receivedAt: now))))
        }
        if life.channels.signed, let transactionID, let jws = simulator.signedTransaction(transactionID) {
            let result = try await reader.transaction(jws, nowMs: now)
            life.messages.append(Message(at: now, work: .record(.with { $0.userID = "u-1"; $0.result = result })))
        }
        if life.channels.receipts, let receipt {
            let request = try JSONSerialization.data(withJSONObject: ["receipt-data": receipt, "password": "s"])
            let answer = simulator.verify(Array(request), at: .sandbox).json
            var result = ReceiptNormalizer.normalize(try AppleResponse(body: Array(answer)), environment: .sandbox, receiptSHA256: "t")
            result.requestDateMs = now
            life.messages.append(Message(at: now, work: .record(.with { $0.userID = "u-1"; $0.result = result })))
        }
    }

    // MARK: The property

    struct Seen: Equatable {
        var product: String
        var expires: Int64
        var revoked: Bool
        var autoRenewProduct: String
    }

    static func apply(_ messages: [Message], otid: String) async throws -> Seen {
        let ledger = try await LedgerFixture()
        for (step, message) in messages.enumerated() {
            _ = try await ledger.apply(message.work, at: t0 + 86_400_000 + Int64(step))
        }
        let s = try #require(try await ledger.subscription(otid))
        return Seen(
            product: s.productID, expires: s.expiresDateMs ?? 0, revoked: s.revokedAtMs != nil,
            autoRenewProduct: s.autoRenewProductID)
    }

    @Test(arguments: 0..<40)
    func anyArrivalOrderGivesTheStateOfApplesTimes(_ seed: Int) async throws {
        let channels = Channels.allCases[seed % Channels.allCases.count]
        let life = try await Self.play(seed: 0xA11CE + UInt64(seed), steps: 10, channels: channels)
        let access = life.model.access
        let model = Seen(
            product: access.product, expires: access.expires, revoked: access.revoked,
            autoRenewProduct: life.model.pending?.product ?? life.model.product)
        let inOrder = try await Self.apply(life.messages, otid: life.otid)
        #expect(inOrder == model, "seed \(seed) \(channels), Apple's order")
        var random = SplitMix64(seed: 0xB0B + UInt64(seed))
        for round in 0..<5 {
            let shuffled = try await Self.apply(life.messages.shuffled(using: &random), otid: life.otid)
            #expect(shuffled == model, "seed \(seed) \(channels), shuffle \(round)")
        }
    }
}
