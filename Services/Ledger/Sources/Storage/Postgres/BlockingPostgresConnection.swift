import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import StorekeeperCore

/// One PostgreSQL connection used synchronously: the ledger's rules are
/// synchronous (`LedgerSession`), so each statement waits for its answer.
/// Only ever used from a thread of a `NIOThreadPool`, never from an event
/// loop (waiting there would deadlock) nor from an async context.
final class BlockingPostgresConnection: Sendable {
    let connection: PostgresConnection
    private let logger: Logger
    private let statementTimeout: TimeAmount

    private init(connection: PostgresConnection, logger: Logger, statementTimeout: TimeAmount) {
        self.connection = connection
        self.logger = logger
        self.statementTimeout = statementTimeout
    }

    static func connect(
        _ url: DatabaseURL, logger: Logger, statementTimeout: TimeAmount = defaultStatementTimeout
    ) throws -> BlockingPostgresConnection {
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: try tls(url.sslMode))
        configuration.options.connectTimeout = .seconds(5)
        let connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration,
            id: Int.random(in: 1...Int.max), logger: logger
        ).wait()
        return BlockingPostgresConnection(connection: connection, logger: logger, statementTimeout: statementTimeout)
    }

    private static func tls(_ mode: DatabaseURL.SSLMode) throws -> PostgresConnection.Configuration.TLS {
        switch mode {
        case .disable: return .disable
        case .require:
            // libpq's `require`: encrypted, the server's certificate not checked.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            return .require(try NIOSSLContext(configuration: tls))
        case .verifyFull:
            return .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }

    /// PostgresNIO traps (in debug builds) when a connection it opened is freed unclosed; whatever
    /// path dropped this one (a lost server, a cancelled term), it is closed here, and kept until it is.
    deinit {
        let connection = self.connection
        if !connection.isClosed { connection.close().whenComplete { _ in _ = connection } }
    }

    var isClosed: Bool { connection.isClosed }

    /// The longest a statement is waited for, unless `connect` is given another. A connection the
    /// server dropped during a restart was seen leaving its query's future unfulfilled forever, with
    /// the writer blocked behind it.
    static let defaultStatementTimeout: TimeAmount = .seconds(30)

    /// No answer within the statement time-out: the connection is closed and must be replaced.
    struct StatementTimedOut: Error, CustomStringConvertible {
        var description: String { "PostgreSQL did not answer a statement in time; the connection is dropped" }
    }

    /// Runs one statement with `binds` as $1, $2, ...
    @discardableResult
    func query(_ sql: String, _ binds: [PostgresBind] = []) throws -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds { try bind.append(to: &bindings) }
        let answer = connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)
        let loop = connection.eventLoop
        let promise = loop.makePromise(of: PostgresQueryResult.self)
        // Both run on the connection's event loop, so the first to complete the promise is the only one.
        let timer = loop.scheduleTask(in: statementTimeout) { promise.fail(StatementTimedOut()) }
        answer.whenComplete { result in
            timer.cancel()
            promise.completeWith(result)
        }
        do {
            return try promise.futureResult.wait()
        } catch let timedOut as StatementTimedOut {
            connection.close().whenComplete { _ in }
            throw timedOut
        }
    }

    /// The number of rows the statement wrote (INSERT, UPDATE, DELETE).
    func execute(_ sql: String, _ binds: [PostgresBind] = []) throws -> Int {
        try query(sql, binds).metadata.rows ?? 0
    }

    /// Runs `script`: statements without parameters, each ending with `;` at the end of a line
    /// (schema migrations; the extended protocol takes one statement at a time).
    func run(script: String) throws {
        for statement in script.components(separatedBy: ";\n") {
            let lines = statement.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }
            let sql = lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            if !sql.isEmpty { try query(sql.hasSuffix(";") ? String(sql.dropLast()) : sql) }
        }
    }

    /// Starts closing, without waiting: callers include async code on an event loop thread
    /// (the sequencer), where waiting would trap.
    func close() {
        let connection = self.connection
        connection.close().whenComplete { _ in _ = connection }
    }
}

/// A statement parameter. Every NULL carries its type, so PostgreSQL never has to guess.
enum PostgresBind {
    case text(String?)
    case int(Int64?)
    case bool(Bool?)
    case bytes([UInt8]?)
    case texts([String])
    /// One column of many rows (multi-row statements over `unnest`), NULLs included.
    case textColumn([String?])
    case intColumn([Int64?])
    case boolColumn([Bool?])
    case bytesColumn([[UInt8]])

    func append(to bindings: inout PostgresBindings) throws {
        switch self {
        case .text(let value): value.map { bindings.append($0) } ?? bindings.append(String?.none)
        case .int(let value): value.map { bindings.append($0) } ?? bindings.append(Int64?.none)
        case .bool(let value): value.map { bindings.append($0) } ?? bindings.append(Bool?.none)
        case .bytes(let value):
            value.map { bindings.append(ByteBuffer(bytes: $0)) } ?? bindings.append(ByteBuffer?.none)
        case .texts(let values): bindings.append(values)
        case .textColumn(let values): bindings.append(PostgresNullableArray(values))
        case .intColumn(let values): bindings.append(PostgresNullableArray(values))
        case .boolColumn(let values): bindings.append(PostgresNullableArray(values))
        case .bytesColumn(let values): bindings.append(values.map { ByteBuffer(bytes: $0) })
        }
    }
}

/// Reading cells of a result row by position.
extension PostgresRandomAccessRow {
    func string(_ index: Int) throws -> String { try self[index].decode(String.self) }
    func optionalString(_ index: Int) throws -> String? { try self[index].decode(String?.self) }
    func int(_ index: Int) throws -> Int64 { try self[index].decode(Int64.self) }
    func optionalInt(_ index: Int) throws -> Int64? { try self[index].decode(Int64?.self) }
    func bool(_ index: Int) throws -> Bool { try self[index].decode(Bool.self) }
    func optionalBool(_ index: Int) throws -> Bool? { try self[index].decode(Bool?.self) }
    func bytes(_ index: Int) throws -> [UInt8] { Array(try self[index].decode(ByteBuffer.self).readableBytesView) }
}

/// How a PostgreSQL failure is handled.
enum PostgresFailureKind {
    /// Serialization failure or deadlock: another ledger changed the same rows; run the work again.
    case conflict
    /// The connection is gone (server restarted, network): reconnect.
    case connectionLost
    case other

    /// Raised by PostgreSQL or its connection, rather than by a rule.
    static func isDatabaseError(_ error: any Error) -> Bool {
        error is PSQLError || error is PostgresDecodingError || error is BlockingPostgresConnection.StatementTimedOut
            || error is PostgresLedgerSession.RowsChangedConcurrently
    }

    init(_ error: any Error) {
        if error is PostgresLedgerSession.RowsChangedConcurrently {
            self = .conflict
            return
        }
        if error is BlockingPostgresConnection.StatementTimedOut {
            self = .connectionLost
            return
        }
        if error is PostgresDecodingError {
            self = .other
            return
        }
        // Anything but the server's own refusal means the connection cannot be trusted.
        guard let error = error as? PSQLError, error.code == .server else {
            self = (error is PSQLError || error is ChannelError || error is IOError || error is NIOConnectionError)
                ? .connectionLost : .other
            return
        }
        let state = error.serverInfo?[.sqlState] ?? ""
        // 40001 serialization_failure, 40P01 deadlock_detected; 57P and 08: the server is going or gone.
        if state == "40001" || state == "40P01" {
            self = .conflict
        } else if state.hasPrefix("57P") || state.hasPrefix("08") {
            self = .connectionLost
        } else {
            self = .other
        }
    }
}

/// An error as logs show it. PSQLError's own description hides everything
/// ("Generic description to prevent accidental leakage"); the server's
/// message and SQLSTATE carry no secret and say what went wrong.
func loggable(_ error: any Error) -> String {
    guard let error = error as? PSQLError else { return "\(error)" }
    guard let info = error.serverInfo else { return "PostgreSQL: \(error.code)" }
    return "PostgreSQL: \(info[.message] ?? "") (SQLSTATE \(info[.sqlState] ?? "?"))"
}
