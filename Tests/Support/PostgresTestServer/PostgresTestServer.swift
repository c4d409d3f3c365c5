import Foundation
import Logging
import NIOPosix
import PostgresNIO
import ProcessSpawn
import StorekeeperCore
import Synchronization

/// A throw-away PostgreSQL cluster for tests: Debian's `initdb` and `postgres`
/// (run as the unprivileged `postgres` user when the tests run as root), on a
/// free loopback port, in a temporary directory, with password (SCRAM) login.
///
/// A watchdog shell stops the server and removes the directory when the test
/// process is gone, even after a crash; `stop`/`start` restart it in place.
/// PostgreSQL missing is a failure, never a skip.
public final class PostgresTestServer: Sendable {
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    public static let user = "storekeeper"
    /// Test-only, and shaped to need percent-encoding in a URL.
    public static let password = "s3cret/p@ss"

    public let port: Int
    public let directory: String
    private let binDirectory: String
    private let watchdog = Mutex<SpawnedProcess?>(nil)

    /// One server for the whole test process, started on first use.
    public static func shared() async throws -> PostgresTestServer {
        try await sharedServer.value
    }

    private static let sharedServer = Task { try await PostgresTestServer.started() }

    /// A new cluster, started.
    public static func started() async throws -> PostgresTestServer {
        let server = try await PostgresTestServer()
        try await server.start()
        return server
    }

    private init() async throws {
        binDirectory = try Self.findBinaries()
        port = try Self.freePort()
        var template = Array("/tmp/storekeeper-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw Unavailable(description: "mkdtemp failed") }
        directory = String(cString: made)
        let passwordFile = directory + "/password"
        try Self.password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        if Self.runsAsRoot { try await Self.run("/bin/chown", ["-R", "postgres:postgres", directory]) }
        try await Self.run(
            Self.asServerUser(binDirectory + "/initdb"),
            Self.asServerUserArguments(binDirectory + "/initdb") + [
                "-D", directory + "/data", "-U", Self.user, "--pwfile=\(passwordFile)", "--auth=scram-sha-256",
                "--locale=C", "-E", "UTF8", "--no-sync",
            ])
    }

    /// postgres://storekeeper:...@127.0.0.1:PORT/DATABASE
    public func url(database: String) -> DatabaseURL {
        DatabaseURL(user: Self.user, password: Self.password, host: "127.0.0.1", port: port, database: database, sslMode: .disable)
    }

    /// The URL as STOREKEEPER_DATABASE_URL takes it.
    public func urlText(database: String) -> String {
        let escaped = Self.password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "postgres://\(Self.user):\(escaped)@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// A new empty database, named uniquely.
    public func newDatabase(prefix: String = "t") async throws -> DatabaseURL {
        let name = "\(prefix)_\(UInt64.random(in: 0...UInt64.max))"
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                host: "127.0.0.1", port: port, username: Self.user, password: Self.password, database: "postgres",
                tls: .disable), id: 1, logger: Logger(label: "test-postgres"))
        defer { Task { try? await connection.close() } }
        try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Logger(label: "test-postgres"))
        return url(database: name)
    }

    /// Starts the server (after `stop`), waiting until it accepts connections.
    public func start() async throws {
        // A server stopped under heavy load may outlive `stop`'s grace (its wrapper is killed, the
        // postmaster finishes its shutdown checkpoint on its own): starting before it has gone
        // fails on its lock file. Its lock file goes when it does.
        for _ in 0..<1_200 where FileManager.default.fileExists(atPath: directory + "/data/postmaster.pid") {
            try await Task.sleep(for: .milliseconds(50))
        }
        let postgres = binDirectory + "/postgres"
        let serverCommand = (Self.runsAsRoot ? "setpriv --reuid=postgres --regid=postgres --clear-groups " : "")
            + "\"\(postgres)\" -D \"\(directory)/data\" -p \(port) -k \"\(directory)\" -c listen_addresses=127.0.0.1"
            + " -c max_connections=300 -c fsync=on"
        // Stops the server when asked (TERM) or when the test process is gone, then (only then) removes the cluster.
        // None of the test process's descriptors (a busy run holds a thousand) reaches it to count
        // against the server's own budget: `SpawnedProcess` closes them in the child.
        let script = """
            \(serverCommand) >>"\(logPath)" 2>&1 & server=$!
            trap 'kill -INT $server; wait $server; exit 0' TERM
            while kill -0 \(getpid()) 2>/dev/null && kill -0 $server 2>/dev/null; do sleep 0.5 & wait $!; done
            kill -0 \(getpid()) 2>/dev/null && exit 1  # the server failed: its log stays for the test to show
            kill -INT $server 2>/dev/null; wait $server; rm -rf "\(directory)"
            """
        let process = try SpawnedProcess(path: "/bin/bash", arguments: ["-c", script], environment: [:]) { _ in }
        watchdog.withLock { $0 = process }
        // A minute: on a loaded 2-core machine starting takes far longer than its usual half second.
        for _ in 0..<1_200 {
            if (try? await Self.run(binDirectory + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", "\(port)"])) != nil {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        throw Unavailable(description: "PostgreSQL did not start in a minute: \(log)")
    }

    /// The server's log: in the cluster's directory, or, when `SK_TEST_PG_LOG_DIR` names a
    /// directory (CI sets it), there, where it outlives the cluster. A client sees only a generic
    /// `PSQLError`; the server's own lines say what went wrong.
    private var logPath: String {
        guard let kept = ProcessInfo.processInfo.environment["SK_TEST_PG_LOG_DIR"], !kept.isEmpty else {
            return directory + "/server.log"
        }
        return kept + "/postgres-\(port).log"
    }

    /// Stops the server (fast shutdown), keeping its data for `start`. Returns once the server
    /// is gone (its `postmaster.pid` removed): under load its shutdown checkpoint can outlast
    /// the watchdog's grace, and a `start` meanwhile would find the old server's lock file.
    public func stop() async {
        guard let process = watchdog.withLock({ $0.take() }) else { return }
        _ = await process.stop(grace: .seconds(30))
        for _ in 0..<2_400 where FileManager.default.fileExists(atPath: directory + "/data/postmaster.pid") {
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Stops the server and removes the cluster.
    public func remove() async {
        await stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Helpers

    private static var runsAsRoot: Bool { getuid() == 0 }

    private static func asServerUser(_ command: String) -> String { runsAsRoot ? "/usr/bin/setpriv" : command }

    private static func asServerUserArguments(_ command: String) -> [String] {
        runsAsRoot ? ["--reuid=postgres", "--regid=postgres", "--clear-groups", command] : []
    }

    private static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        guard
            let version = versions.compactMap(Int.init).sorted().last,
            FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb")
        else {
            throw Unavailable(
                description: "PostgreSQL is not installed (no \(root)/*/bin/initdb): run scripts/install-system-packages.sh")
        }
        return "\(root)/\(version)/bin"
    }

    /// A free port below the ephemeral range: while the server is stopped for a restart, no
    /// outgoing connection of the tests can take its port as a source port.
    private static func freePort() throws -> Int {
        for _ in 0..<1_000 {
            let port = Int.random(in: 10_000..<20_000)
            guard let socket = try? ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .bind(host: "127.0.0.1", port: port).wait()
            else { continue }
            try? socket.close().wait()
            return port
        }
        throw Unavailable(description: "no free port for PostgreSQL in 10000-19999")
    }

    /// Runs a command to its end (a minute at most); throws when it fails.
    @discardableResult
    static func run(_ path: String, _ arguments: [String]) async throws -> String {
        let output = Mutex(Data())
        let process = try SpawnedProcess(
            path: path, arguments: arguments, environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C"]
        ) { chunk in output.withLock { $0.append(chunk) } }
        let status = await process.waitForExit(timeout: .seconds(60))
        let text = String(decoding: output.withLock { $0 }, as: UTF8.self)
        guard status == 0 else {
            throw Unavailable(
                description: "\(path) \(arguments.joined(separator: " ")) failed (\(status.map { "\($0)" } ?? "hung")): \(text)")
        }
        return text
    }
}
