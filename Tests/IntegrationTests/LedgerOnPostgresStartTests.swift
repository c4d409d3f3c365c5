import Foundation
import PostgresTestServer
import Testing

/// `storekeeper-ledger` with STOREKEEPER_DATABASE_URL: a bad URL stops it,
/// an unreachable server makes it wait (answering nothing, so gateways are
/// not ready) and retry until PostgreSQL is there; the password never shows.
@Suite(.serialized) struct LedgerOnPostgresStartTests {
    static let password = "hunter2-not-for-logs"

    @Test(arguments: [
        "postgres://sk:\(password)@:5432/ledger", "mysql://sk:\(password)@db:5432/ledger",
        "postgres://sk:\(password)@db:5432/", "postgres://sk:\(password)@db:5432/ledger?sslmode=maybe",
    ])
    func aMalformedURLStopsItNamingTheVariableButNotThePassword(url: String) async throws {
        let child = try ChildProcess("storekeeper-ledger", environment: ["STOREKEEPER_DATABASE_URL": url])
        let status = await child.waitForOwnExit()
        #expect(status == 78)
        #expect(child.captured.contains("STOREKEEPER_DATABASE_URL"))
        #expect(!child.captured.contains(Self.password))
    }

    @Test func aLedgerStartedBeforePostgreSQLWaitsAndThenServes() async throws {
        let server = try await PostgresTestServer.started()
        let url = try await server.newDatabase()
        await server.stop()
        let environment = try isolatedEnvironment(["STOREKEEPER_DATABASE_URL": server.urlText(database: url.database)])
        let endpoint = try #require(environment["STOREKEEPER_LEDGER_ENDPOINT"])
        let child = try ChildProcess("storekeeper-ledger", environment: environment)
        #expect(await child.waitForOutput(containing: "PostgreSQL unreachable; retrying", timeout: .seconds(30)))
        #expect(!(await LedgerProcess.ping(endpoint)), "no answer while the database is away")
        try await server.start()
        #expect(await child.waitForOutput(containing: "event sequencer elected", timeout: .seconds(30)), "\(child.captured)")
        #expect(await LedgerProcess.ping(endpoint, timeout: .seconds(30)))
        #expect(await child.stop() == 0, "a clean stop, the elected sequencer's included")
        await server.remove()
        #expect(!child.captured.contains(PostgresTestServer.password))
    }

    @Test func dbMigrateAppliesTheSchemaOnceAndThenFindsItUpToDate() async throws {
        let server = try await PostgresTestServer.shared()
        let url = server.urlText(database: try await server.newDatabase().database)
        for expected in ["applied 1-ledger", "up to date"] {
            let child = try ChildProcess("storekeeper", arguments: ["db", "migrate", "--database-url", url], environment: [:])
            #expect(await child.waitForExit() == 0)
            #expect(child.captured.contains(expected), "\(child.captured)")
            #expect(!child.captured.contains(PostgresTestServer.password))
        }
    }
}
