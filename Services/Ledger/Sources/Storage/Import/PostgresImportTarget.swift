import NIOCore
import PostgresNIO

/// The PostgreSQL side of an import: one connection, inside the import's one
/// transaction (the caller begins and ends it).
struct PostgresImportTarget {
    /// Rows per INSERT: a thousand rows of at most 17 columns stay far below
    /// PostgreSQL's 65,535 parameters per statement.
    static let batchSize = 1_000
    /// Rows per FETCH when a table is read back.
    static let fetchSize = 5_000

    let db: BlockingPostgresConnection

    /// Inserts one batch, skipping each row whose key is already there; such a
    /// row must equal the one imported (a re-run), else the import is refused.
    /// Returns how many rows were inserted.
    func insert(_ rows: [[ImportValue]], into table: ImportedTable) throws -> Int {
        guard !rows.isEmpty else { return 0 }
        var binds: [PostgresBind] = []
        var tuples: [String] = []
        for row in rows {
            let first = binds.count + 1
            for (cell, column) in zip(row, table.columns) { binds.append(cell.bind(as: column.kind)) }
            if let derived = table.derived { binds += derived.values(row) }
            tuples.append(Self.placeholders(first...binds.count))
        }
        let names = table.columns.map(\.name) + (table.derived?.names ?? [])
        let inserted = try db.execute(
            """
            INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES \(tuples.joined(separator: ", "))
            ON CONFLICT (\(table.key.joined(separator: ", "))) DO NOTHING
            """, binds)
        if inserted < rows.count { try expectStored(rows, in: table) }
        return inserted
    }

    /// Every row of `rows` is stored with the same values under its key.
    private func expectStored(_ rows: [[ImportValue]], in table: ImportedTable) throws {
        var binds: [PostgresBind] = []
        var tuples: [String] = []
        for row in rows {
            let first = binds.count + 1
            for index in table.keyIndexes { binds.append(row[index].bind(as: table.columns[index].kind)) }
            tuples.append(Self.placeholders(first...binds.count))
        }
        let stored = try db.query(
            """
            SELECT \(table.columnList) FROM \(table.name)
            WHERE (\(table.key.joined(separator: ", "))) IN (\(tuples.joined(separator: ", ")))
            """, binds)
        var storedByKey: [[ImportValue]: [ImportValue]] = [:]
        for row in stored {
            let cells = try Self.cells(of: row, in: table)
            storedByKey[table.keyIndexes.map { cells[$0] }] = cells
        }
        for row in rows where storedByKey[table.keyIndexes.map { row[$0] }] != row {
            throw SQLiteImportError.conflict(in: table)
        }
    }

    /// Calls `each` with every row of `table` as PostgreSQL now holds it, in
    /// key order, through a cursor (a table may hold millions of rows). Text
    /// keys are ordered by byte (`COLLATE "C"`), as SQLite's BINARY orders them.
    func rows(of table: ImportedTable, _ each: ([ImportValue]) throws -> Void) throws {
        let order = table.keyIndexes.map { index in
            let column = table.columns[index]
            return column.kind == .text ? "\(column.name) COLLATE \"C\"" : column.name
        }
        try db.query(
            """
            DECLARE storekeeper_import NO SCROLL CURSOR FOR
            SELECT \(table.columnList) FROM \(table.name) ORDER BY \(order.joined(separator: ", "))
            """)
        while true {
            let batch = try db.query("FETCH FORWARD \(Self.fetchSize) FROM storekeeper_import")
            for row in batch { try each(try Self.cells(of: row, in: table)) }
            if batch.count < Self.fetchSize { break }
        }
        try db.query("CLOSE storekeeper_import")
    }

    /// Moves the `id` serial of binding_history past the ids imported, so the
    /// next move a ledger records takes a new id. Never moves it back.
    func advanceBindingHistoryIDs() throws {
        try db.query(
            """
            SELECT setval(pg_get_serial_sequence('binding_history', 'id'), GREATEST(MAX(id),
                COALESCE(pg_sequence_last_value(pg_get_serial_sequence('binding_history', 'id')::regclass), 1)))
            FROM binding_history HAVING MAX(id) IS NOT NULL
            """)
    }

    private static func placeholders(_ numbers: ClosedRange<Int>) -> String {
        "(" + numbers.map { "$\($0)" }.joined(separator: ", ") + ")"
    }

    private static func cells(of row: PostgresRow, in table: ImportedTable) throws -> [ImportValue] {
        let row = row.makeRandomAccess()
        return try table.columns.enumerated().map { index, column in
            switch column.kind {
            case .text: try row.optionalString(index).map(ImportValue.text) ?? .null
            case .integer: try row.optionalInt(index).map(ImportValue.integer) ?? .null
            case .boolean: try row.optionalBool(index).map(ImportValue.boolean) ?? .null
            case .bytes: try row[index].decode(ByteBuffer?.self).map { .bytes(Array($0.readableBytesView)) } ?? .null
            }
        }
    }
}

extension ImportValue {
    /// The statement parameter for a column of `kind`; a NULL carries the column's type.
    func bind(as kind: ImportedTable.Kind) -> PostgresBind {
        switch (self, kind) {
        case (.text(let text), _): .text(text)
        case (.integer(let number), _): .int(number)
        case (.boolean(let value), _): .bool(value)
        case (.bytes(let bytes), _): .bytes(bytes)
        case (.null, .text): .text(nil)
        case (.null, .integer): .int(nil)
        case (.null, .boolean): .bool(nil)
        case (.null, .bytes): .bytes(nil)
        }
    }
}
