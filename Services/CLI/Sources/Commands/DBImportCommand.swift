import ArgumentParser
import Foundation
import Ledger
import Logging
import StorekeeperCore

extension DBCommand {
    /// `storekeeper db import --from-sqlite PATH`: the flags and the printing;
    /// the import itself is `SQLiteToPostgresImport` (the Ledger module).
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move an SQLite ledger into PostgreSQL, nothing lost; a re-run changes nothing.",
            discussion: """
                Stop every ledger first. The SQLite file is only read. Everything goes in one PostgreSQL \
                transaction, committed only when every table's rows and checksum match on both sides; a target \
                holding other data is refused and left as it was. Exits 0 when both sides match, 1 otherwise.
                """)

        @Option(name: .customLong("from-sqlite"), help: "The ledger's ledger.sqlite, or the directory holding it (STOREKEEPER_DATA_DIR).")
        var sqlitePath: String

        @Option(help: "The target database, as STOREKEEPER_DATABASE_URL takes it (default: that variable).")
        var databaseURL: String?

        func run() async throws {
            let url = try TargetDatabase.url(flag: databaseURL)
            var logger = Logger(label: "storekeeper-db-import") { StreamLogHandler.standardError(label: $0) }
            // Info: a line per table imported, the progress of a long import.
            logger.logLevel = .info
            let report: SQLiteImportReport
            do {
                report = try await SQLiteToPostgresImport(sqlitePath: sqlitePath, target: url, logger: logger).run()
            } catch let error as SQLiteImportError {
                FileHandle.standardError.write(Data("error: \(error)\n".utf8))
                throw ExitCode(1)
            }
            for line in ImportReportText.lines(report, target: url) { print(line) }
            if !report.committed { throw ExitCode(1) }
        }
    }
}
