import GRDB
import PostgresNIO

/// Why `storekeeper db import` moved nothing. Whatever the case, PostgreSQL
/// holds what it held before (the import is one transaction) and the SQLite
/// file was only read.
///
/// Descriptions name tables, columns and the file, never a row's values
/// (user and transaction ids) nor SQL arguments.
public struct SQLiteImportError: Error, Equatable, CustomStringConvertible {
    private enum Code: Equatable {
        case notALedger(path: String, reason: String)
        case unexpectedValue(table: String, column: String)
        case ledgerRunning
        case conflict(table: String, key: [String])
        case postgresFailed(String)
        case sqliteFailed(String)
    }

    private let code: Code

    /// The path is no Storekeeper SQLite ledger this version can read.
    static func notALedger(path: String, reason: String) -> SQLiteImportError {
        SQLiteImportError(code: .notALedger(path: path, reason: reason))
    }

    /// A cell holds a value the ledger never writes there (text in an integer column, a boolean of 2).
    static func unexpectedValue(table: String, column: String) -> SQLiteImportError {
        SQLiteImportError(code: .unexpectedValue(table: table, column: column))
    }

    /// A ledger's event numberer holds its lock on the target: ledgers are writing there.
    static let ledgerRunning = SQLiteImportError(code: .ledgerRunning)

    /// PostgreSQL holds a row under the same key with other values.
    static func conflict(in table: ImportedTable) -> SQLiteImportError {
        SQLiteImportError(code: .conflict(table: table.name, key: table.key))
    }

    /// PostgreSQL or SQLite failed on the way; the text is the server's or library's message, with no arguments.
    static func failed(_ error: any Error) -> SQLiteImportError {
        if let error = error as? DatabaseError {
            return SQLiteImportError(code: .sqliteFailed("\(error.resultCode): \(error.message ?? "")"))
        }
        if let error = error as? PSQLError {
            // The server's message names constraints and types, never values (those are in its DETAIL).
            if let message = error.serverInfo?[.message] {
                return SQLiteImportError(
                    code: .postgresFailed("\(message) (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))"))
            }
            return SQLiteImportError(code: .postgresFailed("cannot reach it or it closed the connection (\(error.code))"))
        }
        return SQLiteImportError(code: .postgresFailed("\(error)"))
    }

    public var description: String {
        switch code {
        case .notALedger(let path, let reason):
            "\(path) is not a Storekeeper ledger to import: \(reason)"
        case .unexpectedValue(let table, let column):
            "SQLite holds a value in \(table).\(column) the ledger never writes there; nothing was imported"
        case .ledgerRunning:
            "a ledger is running on the target database (it holds the event numberer's lock): stop every ledger first"
        case .conflict(let table, let key):
            "PostgreSQL already holds rows of \(table) with the same key (\(key.joined(separator: ", "))) but other values"
                + " than the SQLite ledger: nothing was imported"
        case .postgresFailed(let message):
            "PostgreSQL failed: \(message); nothing was imported"
        case .sqliteFailed(let message):
            "reading the SQLite ledger failed: \(message); nothing was imported"
        }
    }
}
