import Foundation
import LedgerClient
import PostgresTestServer
import Testing
import ZeroMQ

/// `storekeeper db import --from-sqlite` as an operator runs it: the SQLite
/// file of a real `storekeeper-ledger` that recorded purchases and stopped,
/// into a new PostgreSQL database; then again (nothing to insert); then a file
/// that is no ledger. Output and exit status are checked; the password never shows.
@Suite(.serialized) struct DBImportCommandTests {
    static let tables = [
        "transactions", "bindings", "binding_history", "subscriptions", "notifications", "idempotency_keys", "events",
    ]

    @Test func importsARealLedgerThenFindsNothingToInsertAndRefusesANonLedger() async throws {
        let ledger = try await LedgerProcess()
        defer { try? FileManager.default.removeItem(atPath: ledger.dataDirectory) }
        let context = ZMQContext()
        let client = ledger.client(context)
        let clientRunner = Task { try await client.run() }
        let deadline = Int64(Date().timeIntervalSince1970 * 1_000) + 10_000
        for (user, ids) in [("u-1", ["t-1", "t-2"]), ("u-2", ["t-3"])] {
            let outcome = try await client.record(
                recordRequest(user: user, transactionIDs: ids), requestID: "import-\(user)", deadlineMilliseconds: deadline)
            #expect(outcome.granted.map(\.transactionID) == ids)
        }
        clientRunner.cancel()
        #expect(await ledger.process.stop() == 0)

        let server = try await PostgresTestServer.shared()
        let url = server.urlText(database: try await server.newDatabase().database)
        let file = ledger.dataDirectory + "/ledger.sqlite"

        let first = try await Self.run(["db", "import", "--from-sqlite", file, "--database-url", url])
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("schema migrations applied: 1-ledger"), "\(first.output)")
        #expect(first.output.contains("imported "), "\(first.output)")
        let transactions = try #require(first.line(startingWith: "transactions "))
        // TABLE SQLITE POSTGRES INSERTED SQLITE-SHA-256 POSTGRES-SHA-256 VERDICT
        let cells = transactions.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        #expect(cells.count == 7 && Array(cells[1...3]) == ["3", "3", "3"] && cells[4] == cells[5] && cells[6] == "match", "\(transactions)")
        for table in Self.tables { #expect(first.line(startingWith: table + " ") != nil, "\(table) reported") }

        // Again, the URL from the environment this time: nothing to insert, still a success.
        let second = try await Self.run(
            ["db", "import", "--from-sqlite", ledger.dataDirectory], environment: ["STOREKEEPER_DATABASE_URL": url])
        #expect(second.status == 0, "\(second.output)")
        #expect(second.output.contains("nothing to insert"), "\(second.output)")
        let again = try #require(second.line(startingWith: "transactions "))
        let againCells = again.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        #expect(Array(againCells[1...4]) == ["3", "3", "0", cells[4]], "\(again)")

        let notALedger = ledger.dataDirectory + "/notes.txt"
        try "not a database\n".write(toFile: notALedger, atomically: true, encoding: .utf8)
        let refused = try await Self.run(["db", "import", "--from-sqlite", notALedger, "--database-url", url])
        #expect(refused.status == 1)
        #expect(refused.output.contains("is not a Storekeeper ledger"), "\(refused.output)")

        for run in [first, second, refused] { #expect(!run.output.contains(PostgresTestServer.password)) }
    }

    struct Run {
        let status: Int32?
        let output: String

        func line(startingWith prefix: String) -> String? {
            output.split(separator: "\n").map(String.init).first { $0.hasPrefix(prefix) }
        }
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
        let child = try ChildProcess("storekeeper", arguments: arguments, environment: environment)
        let status = await child.waitForOwnExit(timeout: .seconds(120))
        return Run(status: status, output: child.captured)
    }
}
