import Foundation

/// `STOREKEEPER_DATABASE_URL`: where the ledger keeps its state on PostgreSQL,
/// `postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=disable|require|verify-full`.
///
/// The password is held apart and never rendered: `description` and every
/// error name the variable and the part at fault, never the text.
public struct DatabaseURL: Sendable, Equatable, CustomStringConvertible {
    public enum SSLMode: String, Sendable, CaseIterable {
        case disable, require
        case verifyFull = "verify-full"
    }

    public var user: String
    public var password: String?
    public var host: String
    public var port: Int
    public var database: String
    public var sslMode: SSLMode

    public init(user: String, password: String?, host: String, port: Int = 5432, database: String, sslMode: SSLMode) {
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.database = database
        self.sslMode = sslMode
    }

    private static let variable = ConfigurationVariable.databaseURL.rawValue

    public init(parsing text: String) throws(ConfigurationError) {
        func fail(_ reason: String) -> ConfigurationError {
            ConfigurationError(
                variable: Self.variable,
                reason: reason + " (expected postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=disable|require|verify-full)")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme else {
            throw fail("is not a URL")
        }
        guard scheme == "postgres" || scheme == "postgresql" else { throw fail("has scheme '\(scheme)', not postgres") }
        guard let user = components.user, !user.isEmpty else { throw fail("names no user") }
        guard let host = components.host, !host.isEmpty else { throw fail("names no host") }
        let database = String(components.path.dropFirst())
        guard !database.isEmpty, !database.contains("/") else { throw fail("names no database (the path)") }
        if let port = components.port, !(1...65_535).contains(port) { throw fail("has port \(port), not 1-65535") }
        var sslMode = SSLMode.disable
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else { throw fail("has an unknown parameter '\(item.name)'") }
            guard let mode = item.value.flatMap(SSLMode.init(rawValue:)) else {
                throw fail("has sslmode '\(item.value ?? "")'; use disable, require or verify-full")
            }
            sslMode = mode
        }
        self.init(
            user: user, password: components.password, host: host, port: components.port ?? 5432, database: database,
            sslMode: sslMode)
    }

    /// The URL with the password replaced by `***`: safe to log.
    public var description: String {
        "postgres://\(user)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)?sslmode=\(sslMode.rawValue)"
    }
}
