import Contracts
import Foundation
import Testing

@testable import Ledger

@Suite("Idempotency-Key: the first answer is kept with the change it reports")
struct IdempotencyRuleTests {
    static let day: Int64 = 24 * 60 * 60 * 1_000

    static func key(_ key: String = "retry-1", body: String = "body-a") -> IdempotencyKey {
        IdempotencyKey.with {
            $0.scope = String(repeating: "a", count: 64)
            $0.key = key
            $0.requestSha256 = String(repeating: body == "body-a" ? "1" : "2", count: 64)
        }
    }

    static func request(_ user: String, _ result: VerifyResult, key: IdempotencyKey?) -> RecordRequest {
        RecordRequest.with {
            $0.userID = user
            $0.result = result
            if let key {
                $0.idempotency = key
                $0.answerContext = .with {
                    $0.environment = result.environment
                    $0.bundleID = result.bundleID
                }
            }
        }
    }

    static func record(_ ledger: LedgerFixture, _ request: RecordRequest, at now: Int64) async throws -> RecordOutcome {
        guard case .recorded(let outcome) = try await ledger.apply(.record(request), at: now) else {
            throw LedgerFixture.Unexpected()
        }
        return outcome
    }

    @Test("Defect 11: the retry with the same key gets the first answer, granted included; nothing is recorded twice", arguments: StoreKind.allCases)
    func theSameKeyGetsTheFirstAnswer(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let result = Make.result(Make.renewals("1000", count: 2))
        let first = try await Self.record(ledger, Self.request("u-1", result, key: Self.key()), at: Make.t0)
        #expect(first.granted.map(\.transactionID) == ["1000", "1000-1"])
        #expect(first.answerContext.bundleID == "com.example.app")
        let head = try await ledger.headSeq()

        let again = try await Self.record(ledger, Self.request("u-1", result, key: Self.key()), at: Make.t0 + 1_000)
        #expect(again.replayed)
        var unflagged = again
        unflagged.replayed = false
        #expect(try unflagged.serializedBytes() as [UInt8] == first.serializedBytes())
        #expect(try await ledger.headSeq() == head, "a replayed answer records nothing")

        // Without the key the same receipt reports the credits as earlier ones.
        let plain = try await Self.record(ledger, Self.request("u-1", result, key: nil), at: Make.t0 + 2_000)
        #expect(plain.granted.isEmpty)
        #expect(plain.alreadyGranted == ["1000", "1000-1"])
    }

    @Test(arguments: StoreKind.allCases) func theSameKeyWithAnotherBodyIsRefusedAndChangesNothing(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await Self.record(ledger, Self.request("u-1", Make.result(Make.renewals("1000", count: 1)), key: Self.key()), at: Make.t0)
        let head = try await ledger.headSeq()
        let other = Self.request("u-1", Make.result(Make.renewals("2000", count: 1)), key: Self.key(body: "body-b"))
        await #expect(throws: LedgerFailure.idempotencyKeyReused) {
            try await Self.record(ledger, other, at: Make.t0 + 1_000)
        }
        #expect(try await ledger.headSeq() == head)
        #expect(try await ledger.store.read { try $0.transaction(TransactionKey(.sandbox, "2000")) } == nil)
    }

    @Test(arguments: StoreKind.allCases) func aKeyIsScopedToItsAPIKey(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        _ = try await Self.record(ledger, Self.request("u-1", Make.result(Make.renewals("1000", count: 1)), key: Self.key()), at: Make.t0)
        var otherScope = Self.key(body: "body-b")
        otherScope.scope = String(repeating: "b", count: 64)
        let outcome = try await Self.record(
            ledger, Self.request("u-2", Make.result(Make.renewals("2000", count: 1)), key: otherScope), at: Make.t0 + 1)
        #expect(!outcome.replayed)
        #expect(outcome.granted.map(\.transactionID) == ["2000"])
    }

    @Test(arguments: StoreKind.allCases) func aKeyOlderThan24HoursIsForgottenAndPruned(_ store: StoreKind) async throws {
        let ledger = try await LedgerFixture(store)
        let result = Make.result(Make.renewals("1000", count: 1))
        _ = try await Self.record(ledger, Self.request("u-1", result, key: Self.key()), at: Make.t0)
        let later = try await Self.record(ledger, Self.request("u-1", result, key: Self.key()), at: Make.t0 + Self.day)
        #expect(!later.replayed, "past 24 hours the key is new again")
        #expect(later.alreadyGranted == ["1000"])
        guard case .count(let pruned) = try await ledger.apply(.pruneIdempotentAnswers(before: Make.t0 + 2 * Self.day), at: Make.t0 + 2 * Self.day)
        else { throw LedgerFixture.Unexpected() }
        #expect(pruned == 1)
    }

    @Test(arguments: ["", String(repeating: "k", count: 256), "tab\there", "é"])
    func aKeyOutsidePrintableASCIIIsABadRequest(_ text: String) async throws {
        let ledger = try await LedgerFixture()
        var key = Self.key()
        key.key = text
        await #expect(throws: LedgerFailure.self) {
            try await Self.record(ledger, Self.request("u-1", Make.result(Make.renewals("1000", count: 1)), key: key), at: Make.t0)
        }
        #expect(try await ledger.headSeq() == 0)
    }
}
