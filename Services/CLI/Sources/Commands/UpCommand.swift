import AppleJWS
import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import StorekeeperCore

/// `storekeeper up`: a whole local stack in the foreground.
struct UpCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "up",
        abstract: "Run ledger, verifiers and gateway (and with --sim the App Store simulator) in the foreground.")

    @Option(help: "How many verifier processes to start.")
    var verifiers = 2

    @Option(help: "How many ledger processes to start (more than one needs PostgreSQL: --database-url).")
    var ledgers = 1

    @Option(help: "How many gateway processes to start (the HTTP port of each next one is one higher).")
    var gateways = 1

    @Option(help: "The ledgers' PostgreSQL, as STOREKEEPER_DATABASE_URL takes it (default: that variable; unset: SQLite).")
    var databaseURL: String?

    @Flag(help: "Also start storekeeper-sim and point the verifiers at it instead of Apple.")
    var sim = false

    @Option(help: "Where the storekeeper-* executables are (default: beside this one).")
    var binDir: String?

    func validate() throws {
        guard (1...64).contains(verifiers) else { throw ValidationError("--verifiers must be between 1 and 64") }
        guard (1...16).contains(ledgers) else { throw ValidationError("--ledgers must be between 1 and 16") }
        guard (1...16).contains(gateways) else { throw ValidationError("--gateways must be between 1 and 16") }
        if let databaseURL {
            // Checked here so a bad URL stops before anything starts; the message never shows the password.
            do { _ = try DatabaseURL(parsing: databaseURL) } catch { throw ValidationError("--database-url: \(error.reason)") }
        }
    }

    func run() async throws {
        let configuration: StorekeeperConfiguration
        do {
            configuration = try StorekeeperConfiguration(reader: EnvironmentReader())
            // With the simulator, its bundle stands in (StackPlan); without, the gateway and verifiers need one.
            if !sim {
                try configuration.apple.requireBundleIDs()
                // With the simulator, its key stands in (StackPlan); without, server_api needs real credentials.
                try configuration.requireServerAPIForReceipts()
            }
            if ledgers > 1, databaseURL == nil, configuration.ledger.databaseURL == nil {
                throw ConfigurationError(
                    variable: ConfigurationVariable.databaseURL.rawValue,
                    reason: "several ledgers share one PostgreSQL: set it or pass --database-url (SQLite is one ledger's own file)")
            }
        } catch {
            print("configuration error: \(error)")
            throw ExitCode(ProcessLauncher.configurationErrorStatus)
        }
        LoggingBootstrap.bootstrap(configuration.log, secrets: configuration.secrets)
        let logger = Logger(label: "storekeeper")
        let directory = binDir.map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        // The simulator's test root, for the verifiers to trust what the simulator signs: public, but in
        // a directory of this run's own, so nobody else's file can stand in for it.
        let runDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-up-\(UUID().uuidString)")
        let simulatorRoot = runDirectory.appendingPathComponent("simulator-root.pem")
        // The simulator's App Store Connect key (a test key, in the source): readable by this user only, as a .p8 should be.
        let simulatorKey = runDirectory.appendingPathComponent("simulator-server-api-key.p8")
        if sim {
            try FileManager.default.createDirectory(
                at: runDirectory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try SimulatorSigningChain.rootCertificatePEM.write(to: simulatorRoot, atomically: true, encoding: .utf8)
            guard
                FileManager.default.createFile(
                    atPath: simulatorKey.path, contents: Data(SimulatorServerAPIKey.privateKeyPEM.utf8),
                    attributes: [.posixPermissions: 0o600])
            else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: simulatorKey.path]) }
        }
        defer { try? FileManager.default.removeItem(at: runDirectory) }
        let supervisor = StackSupervisor(
            plan: StackPlan(
                configuration: configuration,
                scale: .init(verifiers: verifiers, ledgers: ledgers, gateways: gateways, databaseURL: databaseURL),
                withSimulator: sim,
                demoSecret: (0..<16).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max)) }.joined(),
                simulatorRootFile: simulatorRoot.path, simulatorKeyFile: simulatorKey.path),
            binaryDirectory: directory, logger: logger)
        // A closed terminal (SIGHUP) stops the stack like Ctrl-C; a closed output pipe must not kill
        // the supervisor and orphan its children (the children are in their own process groups).
        signal(SIGPIPE, SIG_IGN)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: supervisor)], gracefulShutdownSignals: [.sigterm, .sigint, .sighup],
                logger: logger))
        do {
            try await group.run()
        } catch let gaveUp as SupervisedChild.GaveUp {
            logger.critical("stack stopped", metadata: ["error": "\(gaveUp)"])
            throw ExitCode(ProcessLauncher.configurationErrorStatus)
        }
    }
}
