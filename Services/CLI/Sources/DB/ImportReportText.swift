import Foundation
import Ledger
import StorekeeperCore

/// `storekeeper db import`'s report as printed: a line per table with the
/// rows on each side, the rows inserted now and both checksums, then the
/// verdict.
enum ImportReportText {
    static func lines(_ report: SQLiteImportReport, target: DatabaseURL) -> [String] {
        var lines = ["import \(report.sqlitePath) into \(target)"]
        if !report.migrationsApplied.isEmpty {
            lines.append("schema migrations applied: \(report.migrationsApplied.joined(separator: ", "))")
        }
        let nameWidth = report.tables.map(\.name.count).max() ?? 0
        lines.append(
            row("TABLE", ["SQLITE", "POSTGRES", "INSERTED"], ["SQLITE SHA-256", "POSTGRES SHA-256"], "", nameWidth: nameWidth))
        for table in report.tables {
            lines.append(
                row(
                    table.name, ["\(table.sqliteRows)", "\(table.postgresRows)", "\(table.insertedRows)"],
                    [table.sqliteSHA256, table.postgresSHA256], table.matches ? "match" : "DIFFERENT", nameWidth: nameWidth))
        }
        let inserted = report.tables.map(\.insertedRows).reduce(0, +)
        if report.committed {
            lines.append(
                inserted == 0
                    ? "nothing to insert: PostgreSQL already holds every row, and every table matches"
                    : "imported \(inserted) rows: every table matches")
        } else {
            let different = report.tables.filter { !$0.matches }.map(\.name).joined(separator: ", ")
            lines.append(
                "NOT imported: PostgreSQL would not equal the SQLite ledger (\(different)); rolled back, PostgreSQL is unchanged")
        }
        return lines
    }

    /// The name left-aligned, the counts right-aligned, the checksums (64 hex digits) left-aligned.
    private static func row(_ name: String, _ counts: [String], _ checksums: [String], _ verdict: String, nameWidth: Int) -> String {
        func left(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }
        func right(_ text: String, _ width: Int) -> String { String(repeating: " ", count: max(0, width - text.count)) + text }
        let cells = [left(name, nameWidth)] + counts.map { right($0, 8) } + checksums.map { left($0, 64) } + [verdict]
        var line = cells.joined(separator: "  ")
        while line.last == " " { line.removeLast() }
        return line
    }
}
