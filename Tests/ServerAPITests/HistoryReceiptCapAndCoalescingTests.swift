import CallGates
import Contracts
import MetricsTestKit
import Testing

@testable import Simulator
@testable import Verifier

/// `server_api` receipts behind the verifier's front door, as verifyReceipt's
/// are: identical receipts in flight together make one Get Transaction History
/// (Apple rate-limits the Server API), and past `maxInFlight` a receipt is
/// `overloaded` without a call. Calls are held at a gate, not timed.
@Suite("Receipts read with the Server API share the verifier's cap and coalescing")
struct HistoryReceiptCapAndCoalescingTests {
    static func request(_ receipt: String) -> VerifyRequest { .with { $0.receiptData = receipt } }

    /// Sends every request at once and opens the gate once each caller is either
    /// held at it or waiting for another's call: none can come late and find the call over.
    static func burst(
        _ requests: [VerifyRequest], to verifier: ReceiptVerifier, gate: CallGate
    ) async -> [Result<VerifyResult, VerifyFailure>] {
        await withTaskGroup(of: Result<VerifyResult, VerifyFailure>.self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { await verifier.verify(request, deadline: .now + .seconds(60), requestID: "req-\(index)") }
            }
            // Bounded, and sleeping: a spin would hold a thread the other suites' tasks need.
            for _ in 0..<10_000 where gate.waiting + verifier.coalescedCallers < requests.count {
                try? await Task.sleep(for: .milliseconds(1))
            }
            gate.open()
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func identicalReceiptsInFlightTogetherMakeOneHistoryCall() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy("com.example.removeads", type: .nonConsumable, environment: .production, account: "burst")
            let (gate, metrics) = (CallGate(), TestMetrics())
            let verifier = try harness.historyVerifier(gate: gate, metrics: metrics)
            let results = await Self.burst(Array(repeating: Self.request(bought.receiptData), count: 12), to: verifier, gate: gate)

            let answers = results.compactMap { try? $0.get() }
            #expect(answers.count == 12)
            #expect(answers.allSatisfy { $0 == answers.first }, "one answer for all")
            #expect(answers.first?.transactions.map(\.transactionID) == [bought.transactionID])
            #expect(harness.paths == ["/production/inApps/v2/history/\(bought.transactionID)"])
            #expect(try metrics.expectCounter("storekeeper_verifier_coalesced_total").totalValue == 11)
        }
    }

    @Test func flagsTheHistoryDoesNotReadDoNotSplitABurst() async throws {
        try await ServerAPIHarness.with { harness in
            let bought = try harness.buy("com.example.removeads", type: .nonConsumable, environment: .production, account: "flags")
            let gate = CallGate()
            let verifier = try harness.historyVerifier(gate: gate)
            // A client's request, one excluding old transactions, and the ledger's refresh starting at the sandbox.
            let requests = [(false, AppleEnvironment.production), (true, .production), (false, .sandbox), (true, .sandbox)].map {
                exclude, start in
                VerifyRequest.with {
                    $0.receiptData = bought.receiptData
                    $0.excludeOldTransactions = exclude
                    $0.startEnvironment = start
                }
            }
            let results = await Self.burst(requests, to: verifier, gate: gate)

            #expect(results.compactMap { try? $0.get().transactions.map(\.transactionID) } == Array(repeating: [bought.transactionID], count: 4))
            #expect(harness.paths == ["/production/inApps/v2/history/\(bought.transactionID)"])
        }
    }

    @Test func pastMaxInFlightAReceiptIsOverloadedWithoutACall() async throws {
        try await ServerAPIHarness.with { harness in
            let receipts = try ["cap-1", "cap-2", "cap-3"].map { account in
                try harness.buy("com.example.removeads", type: .nonConsumable, environment: .production, account: account)
            }
            // Holds the two calls the cap allows; a third, were it made, would go through and be answered.
            let (gate, metrics) = (CallGate(holding: 2), TestMetrics())
            let verifier = try harness.historyVerifier(maxInFlight: 2, gate: gate, metrics: metrics)
            try await withThrowingTaskGroup(of: VerifyResult.self) { group in
                for bought in receipts.prefix(2) {
                    group.addTask {
                        try await verifier.verify(Self.request(bought.receiptData), deadline: .now + .seconds(60), requestID: "req-held").get()
                    }
                }
                for _ in 0..<10_000 where gate.waiting < 2 { try await Task.sleep(for: .milliseconds(1)) }

                let refused = await verifier.verify(Self.request(receipts[2].receiptData), deadline: .now + .seconds(60), requestID: "req-over")
                #expect(refused == .failure(.overloaded))
                #expect(VerifyFailure.overloaded.serviceFailure.failureCode == .overloaded)
                #expect(harness.paths.count == 2, "no call for the refused receipt")
                #expect(try metrics.expectGauge("storekeeper_verifier_in_flight").values.max() == 2)

                gate.open()
                for try await answered in group { #expect(answered.transactions.count == 1) }
            }
            // Answered, the two leave room again.
            let after = await verifier.verify(Self.request(receipts[2].receiptData), deadline: .now + .seconds(60), requestID: "req-after")
            #expect((try? after.get().transactions.map(\.transactionID)) == [receipts[2].transactionID])
            // With nothing left in flight, the gauge says so (it stayed at the peak before).
            #expect(try metrics.expectGauge("storekeeper_verifier_in_flight").lastValue == 0)
        }
    }
}
