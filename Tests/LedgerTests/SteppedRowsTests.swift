import Foundation
import GRDB
import Testing

@testable import Ledger

@Suite("Statements run and read without GRDB's arguments and rows, with the same values")
struct SteppedRowsTests {
    static func database() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER, flag INTEGER, bytes BLOB)")
        }
        return queue
    }

    @Test func everyKindOfValueGoesInAndComesBackAsGRDBReadsIt() throws {
        let queue = try Self.database()
        let names: [String?] = ["plain", "", "é 😀 \u{0}inside", nil]
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t (id, name, n, flag, bytes) VALUES (?, ?, ?, ?, ?)")
            for (id, name) in names.enumerated() {
                try insert.run {
                    $0.integer(Int64(id))
                    $0.text(name)
                    $0.integer(id == 3 ? nil : Int64.min + Int64(id))
                    $0.bool(id == 2 ? nil : id % 2 == 0)
                    $0.blob(id == 1 ? [] : [0, 1, 255])
                }
            }
        }
        // The bytes stored are the bytes GRDB's own binding stores, a NUL inside included (GRDB
        // binds a string up to one; hex, because its reading also stops there).
        let stored = try queue.read { db in try String.fetchAll(db, sql: "SELECT typeof(name) || hex(name) FROM t ORDER BY id") }
        let byGRDB = try queue.write { db in
            try names.map { try String.fetchOne(db, sql: "SELECT typeof(?1) || hex(?1)", arguments: [$0]) ?? "" }
        }
        #expect(stored == byGRDB)
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT name, n, flag, bytes FROM t ORDER BY id") }
        #expect(rows.map { $0[0] as String? } == ["plain", "", "é 😀 ", nil])
        #expect(rows.map { $0[1] as Int64? } == [Int64.min, Int64.min + 1, Int64.min + 2, nil])
        #expect(rows.map { $0[2] as Bool? } == [true, false, nil, false])
        #expect(rows.map { ($0[3] as Data?).map(Array.init) } == [[0, 1, 255], [], [0, 1, 255], [0, 1, 255]])
        // Read back in place too, with parameters bound directly.
        let read = try queue.read { db in
            try db.cachedStatement(sql: "SELECT name, n FROM t WHERE id >= ? AND name IS NOT ? ORDER BY id").mapRows({
                $0.integer(1)
                $0.text("plain")
            }) { row in (row[0] as String?, row[1] as Int64?) }
        }
        #expect(read.map(\.0) == ["", "é 😀 ", nil])
        #expect(read.map(\.1) == [Int64.min + 1, Int64.min + 2, nil])
    }

    @Test func aStatementRunsAgainWithNewValuesAndAFailureIsThrown() throws {
        let queue = try Self.database()
        try queue.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO t (id, name) VALUES (?, ?)")
            try insert.run {
                $0.integer(1)
                $0.text("a")
            }
            #expect(throws: DatabaseError.self) {
                try insert.run {
                    $0.integer(1)  // the same primary key
                    $0.text("b")
                }
            }
            try insert.run {
                $0.integer(2)
                $0.null()
            }
            let first = try db.cachedStatement(sql: "SELECT name FROM t WHERE id = ?").mapFirstRow({ $0.integer(1) }) { $0[0] as String }
            #expect(first == "a")
            let none = try db.cachedStatement(sql: "SELECT name FROM t WHERE id = ?").mapFirstRow({ $0.integer(9) }) { $0[0] as String }
            #expect(none == nil)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") == 2)
        }
    }
}
