// A database of its own for one benchmark run, on the PostgreSQL server a
// `--database-url` names, dropped afterwards. The simulator's transaction ids
// start over with every run, so a database kept from a run before would turn
// every grant into a replay and measure another workload.
import Foundation
import Logging
import NIOPosix
import PostgresNIO
import StorekeeperCore

public struct ThrowawayDatabase: Sendable {
    /// The new database's URL, password included: for the ledger's environment only, never printed.
    public let urlText: String
    public let name: String
    private let server: DatabaseURL

    /// Creates `storekeeper_bench_<random>` on the server of `serverURL` (its database is only connected to).
    public static func create(on serverURL: String) async throws -> ThrowawayDatabase {
        let server = try DatabaseURL(parsing: serverURL)
        let name = "storekeeper_bench_\(UInt32.random(in: 0...UInt32.max))"
        try await server.administer("CREATE DATABASE \(name)")
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = server.user
        components.password = server.password
        components.host = server.host
        components.port = server.port
        components.path = "/" + name
        components.queryItems = [URLQueryItem(name: "sslmode", value: server.sslMode.rawValue)]
        return ThrowawayDatabase(urlText: components.string ?? "", name: name, server: server)
    }

    public func drop() async {
        try? await server.administer("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

extension DatabaseURL {
    /// Runs one statement on this URL's database (the benchmarks' TLS-less local servers only).
    fileprivate func administer(_ sql: String) async throws {
        let configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: Logger(label: "bench.postgres"))
        do {
            _ = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "bench.postgres"))
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
