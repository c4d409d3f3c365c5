// The whole stack on SQLite and on PostgreSQL, side by side in one run:
// scenario (a) on each store in turn, twice (A B A B), so that the machine's
// drifting speed shows as a difference between rounds, not between stores.
import BenchmarkSupport
import Foundation

enum StoreComparison {
    static func run(_ options: Options, serverURL: String) async throws -> [String] {
        var lines: [String] = []
        for round in 1...2 {
            for store in ["SQLite", "PostgreSQL"] {
                let database = store == "PostgreSQL" ? try await ThrowawayDatabase.create(on: serverURL) : nil
                let stack: BenchStack
                do {
                    stack = try await BenchStack.start(
                        binDir: options.binDir, verifiers: options.verifiers, databaseURL: database?.urlText)
                } catch {
                    await database?.drop()
                    throw error
                }
                do {
                    lines.append(try await measure(stack, options, label: "(a) \(store), round \(round)"))
                } catch {
                    stack.stop()
                    await database?.drop()
                    throw error
                }
                stack.stop()
                await database?.drop()
            }
        }
        let header = ["scenario".padding(toLength: 34, withPad: " ", startingAt: 0), "requests", "ok", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "errors"]
        return [header.joined(separator: " | ")] + lines
    }

    /// (a) on a fresh stack: the row, with what the ledger and the whole stack used per verification.
    private static func measure(_ stack: BenchStack, _ options: Options, label: String) async throws -> String {
        let simulator = HTTPLoadClient(host: "127.0.0.1", port: stack.simPort)
        let gateway = HTTPLoadClient(host: "127.0.0.1", port: stack.gatewayPort)
        let summary: LoadSummary
        let cpu: [(name: String, seconds: Double)]
        var postgresBefore: [Int32: Double] = [:]
        var postgres = 0.0
        do {
            let bodies = try Workload.receiptBodies(
                try await Workload.mint(options.requests, prefix: "compare", simulator: simulator))
            let cpuBefore = stack.cpuSeconds()
            postgresBefore = cpuSecondsOfProcesses(named: "postgres")
            summary = try await ClosedLoop.run(count: bodies.count, concurrency: options.concurrency) { index in
                outcome(of: await attempt { try await gateway.send(.POST, "/v1/receipts", json: bodies[index]) })
            }
            cpu = stack.cpuSeconds(since: cpuBefore)
            postgres = cpuSecondsUsed(from: postgresBefore, to: cpuSecondsOfProcesses(named: "postgres"))
        } catch {
            await gateway.shutdown()
            await simulator.shutdown()
            throw error
        }
        await gateway.shutdown()
        await simulator.shutdown()
        let ledger = cpu.filter { $0.name == "ledger" }.map(\.seconds).reduce(0, +)
        let storekeeper = cpu.filter { !BenchStack.harness.contains($0.name) }.map(\.seconds).reduce(0, +)
        let perVerification = { (seconds: Double) in fixed(1_000 * seconds / Double(summary.count), 3) }
        return row(label, summary, extra: "CPU ms per verification: ledger \(perVerification(ledger)), "
            + "PostgreSQL \(perVerification(postgres)), Storekeeper together \(perVerification(storekeeper))")
    }
}
