import ArgumentParser
import Ledger
import Logging
import StorekeeperCore

/// `storekeeper db`: the ledger's PostgreSQL database.
struct DBCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "db", abstract: "Operate the ledger's PostgreSQL database.", subcommands: [Migrate.self, Import.self])

    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Apply the schema migrations not yet applied (ledgers also do at start; safe to run beside them).")

        @Option(help: "The database, as STOREKEEPER_DATABASE_URL takes it (default: that variable).")
        var databaseURL: String?

        func run() async throws {
            let url = try TargetDatabase.url(flag: databaseURL)
            let applied = try await PostgresLedgerStore.migrate(url: url, logger: Logger(label: "storekeeper"))
            print(applied.isEmpty ? "\(url): up to date" : "\(url): applied \(applied.joined(separator: ", "))")
        }
    }
}
