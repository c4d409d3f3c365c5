import Contracts
import Foundation
import SeededRandom
import StorekeeperCore
import Testing

@testable import Ledger

/// A PostgreSQL group commit keeps its reads in a cache and its writes in
/// memory until the end of the group (PostgresGroupSession). Random groups of
/// every kind of work, committed the same way on SQLite (plain SQL) and on
/// PostgreSQL, must give the same answer to every unit and end in the same state.
@Suite("PostgreSQL group commits answer as SQLite's do")
struct PostgresGroupCommitTests {
    static let t0 = Make.t0
    static let minute = Make.minute
    static let users = ["u-1", "u-2", "u-3", "u-4"]

    /// Two subscriptions, the second with a refunded period; consumables; a non-consumable.
    static func pool(_ generator: inout SplitMix64) -> [Transaction] {
        let s1 = Make.renewals("s1", count: Int.random(in: 1...4, using: &generator))
        var s2 = Make.renewals("s2", count: 3, product: "com.example.pro.yearly")
        if Bool.random(using: &generator) { s2[2].cancellationDateMs = t0 + 11 * minute }
        let oneOff = ["c1", "c2", "c3"].map { Make.transaction($0, product: "com.example.coins", purchased: t0 + minute) }
        var lifetime = Make.transaction("n1", product: "com.example.lifetime", purchased: t0 + 2 * minute)
        lifetime.kind = .nonConsumable
        return s1 + s2 + oneOff + [lifetime]
    }

    static func work(_ generator: inout SplitMix64) -> LedgerWork {
        let pool = pool(&generator)
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<5:
            let transactions = pool.filter { _ in Int.random(in: 0..<3, using: &generator) == 0 }
            let result = Make.result(
                transactions.isEmpty ? [pool[0]] : transactions,
                pending: [Make.pending("s1", autoRenew: Bool.random(using: &generator))])
            return .record(.with {
                $0.userID = users.randomElement(using: &generator)!
                $0.result = result
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    $0.idempotency = .with {
                        $0.scope = "key-1"
                        $0.key = "idem-\(Int.random(in: 0..<3, using: &generator))"
                        $0.requestSha256 = String(repeating: Bool.random(using: &generator) ? "a" : "b", count: 64)
                    }
                }
            })
        case 5..<8:
            let id = "n-\(Int.random(in: 0..<6, using: &generator))"
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                return .notification(Make.notification("DID_RENEW", id: id, otid: "s1", transactions: Array(pool.prefix(2))))
            case 1:
                return .notification(
                    Make.notification(
                        "REFUND", id: id, otid: "s2",
                        transactions: [Make.transaction("s2-1", otid: "s2", purchased: t0 + 5 * minute, expires: t0 + 10 * minute,
                            cancelled: t0 + 6 * minute)]))
            default:
                return .notification(
                    Make.notification(
                        "DID_CHANGE_RENEWAL_STATUS", id: id, otid: "s1", autoRenew: Bool.random(using: &generator),
                        signed: t0 + Int64.random(in: 0...20, using: &generator) * minute))
            }
        case 8: return .sweepExpired(limit: 10)
        default:
            return Bool.random(using: &generator)
                ? .claimRefreshes(limit: 5) : .pruneIdempotentAnswers(before: t0 + Int64.random(in: 0...30, using: &generator) * minute)
        }
    }

    /// Thrown by a unit after its rule ran and wrote: everything it wrote must be undone.
    struct Doomed: Error {}

    /// A work, and whether its unit fails after running it.
    typealias Unit = (work: LedgerWork, doomed: Bool)

    /// Every unit's answer as text, in order, and the state after the last group.
    static func run(_ groups: [[Unit]], on ledger: LedgerFixture, prefetched: Bool) async throws -> [String] {
        var answers: [String] = []
        let rules = ledger.rules
        for (index, works) in groups.enumerated() {
            let now = t0 + Int64(index) * minute
            let prefetch = prefetched ? rules.prefetch(for: works.map(\.work)) : LedgerPrefetch()
            let outcomes = try await ledger.store.commit(units: works.count, prefetch: prefetch) { unit, session in
                let output = try rules.apply(works[unit].work, requestID: "g\(index)-\(unit)", now: now, session: session)
                if works[unit].doomed { throw Doomed() }
                return output
            }
            if let postgres = ledger.store as? PostgresLedgerStore { try await postgres.numberPendingEvents() }
            answers += outcomes.map { outcome in
                switch outcome.result {
                case .success(let output): "\(output)"
                case .failure(let error): "failed: \(error)"
                }
            }
        }
        let end = t0 + Int64(groups.count) * minute
        for user in users {
            answers.append("\(user): \(try await ledger.entitlements(user, at: end))")
        }
        for otid in ["s1", "s2", "c1", "c2", "c3", "n1"] {
            let key = SubscriptionKey(.sandbox, otid)
            answers.append("\(otid): owner \(String(describing: try await ledger.owner(otid)))")
            answers.append("\(otid): \(String(describing: try await ledger.subscription(otid)))")
            answers.append("\(otid): \(try await ledger.store.read { try $0.transactions(of: key) })")
        }
        answers += try await ledger.events().map { "event \($0.seq): \($0)" }
        return answers
    }

    @Test(arguments: [BindingPolicy.transfer, .keep], [true, false])
    func randomGroupsGiveSQLitesAnswers(policy: BindingPolicy, prefetched: Bool) async throws {
        for seed in UInt64(1)...4 {
            var generator = SplitMix64(seed: seed &* 7919 + (policy == .keep ? 1 : 0))
            let groups = (0..<25).map { _ in
                (0..<Int.random(in: 1...8, using: &generator)).map { _ in
                    (Self.work(&generator), Int.random(in: 0..<8, using: &generator) == 0)
                }
            }
            let expected = try await Self.run(groups, on: try await LedgerFixture(.sqlite, policy: policy), prefetched: prefetched)
            let got = try await Self.run(groups, on: try await LedgerFixture(.postgres, policy: policy), prefetched: prefetched)
            #expect(got.count == expected.count)
            // A refusal is part of what must match: the pool makes some.
            #expect(expected.contains { $0.hasPrefix("failed") } || policy == .transfer)
            for (index, (a, b)) in zip(got, expected).enumerated() where a != b {
                Issue.record("seed \(seed), line \(index):\n got \(a)\nwant \(b)")
                break
            }
        }
    }
}
