// Scenario (a) on two configurations of the stack, side by side in one run:
// each in turn, twice (A B A B), so that the machine's drifting speed shows
// as a difference between rounds, not between configurations.
//   --compare-stores URL      the ledger on SQLite, then on PostgreSQL (a throw-away database on URL's server)
//   --compare-receipt-modes   receipts read by verifyReceipt, then by the App Store Server API
//                             (STOREKEEPER_RECEIPT_VERIFICATION=server_api, the simulator's test key)
//   --compare-transports      the processes over ZeroMQ on TCP loopback, then on ipc:// socket files
import BenchmarkSupport
import Foundation

/// One configuration of the stack in a comparison.
struct StackVariant {
    let name: String
    /// Starts the stack; the closure it gives back tidies up after the stack stopped.
    let start: () async throws -> (BenchStack, () async -> Void)
}

enum SideBySide {
    static func stores(_ options: Options, serverURL: String) -> [StackVariant] {
        ["SQLite", "PostgreSQL"].map { store in
            StackVariant(name: store) {
                let database = store == "PostgreSQL" ? try await ThrowawayDatabase.create(on: serverURL) : nil
                do {
                    let stack = try await BenchStack.start(
                        binDir: options.binDir, verifiers: options.verifiers, databaseURL: database?.urlText)
                    return (stack, { await database?.drop() })
                } catch {
                    await database?.drop()
                    throw error
                }
            }
        }
    }

    static func receiptModes(_ options: Options) -> [StackVariant] {
        [ReceiptMode.verifyReceipt, .serverAPI].map { mode in
            StackVariant(name: mode.rawValue) {
                (try await BenchStack.start(binDir: options.binDir, verifiers: options.verifiers, receiptMode: mode), {})
            }
        }
    }

    static func transports(_ options: Options) -> [StackVariant] {
        ZeroMQTransport.allCases.map { transport in
            StackVariant(name: "ZeroMQ over \(transport.rawValue)") {
                (try await BenchStack.start(binDir: options.binDir, verifiers: options.verifiers, transport: transport), {})
            }
        }
    }

    static func run(_ options: Options, _ variants: [StackVariant]) async throws -> [String] {
        var lines: [String] = []
        for round in 1...2 {
            for variant in variants {
                let (stack, tidy) = try await variant.start()
                do {
                    lines.append(try await measure(stack, options, label: "(a) \(variant.name), round \(round)"))
                } catch {
                    stack.stop()
                    await tidy()
                    throw error
                }
                stack.stop()
                await tidy()
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
        let switches: Int
        var postgres = 0.0
        do {
            let bodies = try Workload.receiptBodies(
                try await Workload.mint(options.requests, prefix: "compare", simulator: simulator))
            let (cpuBefore, switchesBefore) = (stack.cpuSeconds(), stack.storekeeperContextSwitches())
            postgresBefore = cpuSecondsOfProcesses(named: "postgres")
            summary = try await ClosedLoop.run(count: bodies.count, concurrency: options.concurrency) { index in
                outcome(of: await attempt { try await gateway.send(.POST, "/v1/receipts", json: bodies[index]) })
            }
            cpu = stack.cpuSeconds(since: cpuBefore)
            switches = stack.storekeeperContextSwitches() - switchesBefore
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
            + "PostgreSQL \(perVerification(postgres)), Storekeeper together \(perVerification(storekeeper)); "
            + "its context switches per verification \(fixed(Double(switches) / Double(summary.count), 1))")
    }
}
