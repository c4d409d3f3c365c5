import Foundation
import Logging
import Prometheus
import ServiceLifecycle

/// What a Storekeeper executable does around its services: read and validate
/// the configuration (a bad value exits 78 naming the variable), install
/// logging and metrics once, run the services until SIGTERM or SIGINT, and
/// stop them in reverse order.
public enum ProcessLauncher {
    /// Exit status for a configuration error (sysexits.h EX_CONFIG).
    public static let configurationErrorStatus: Int32 = 78
    /// How long a stopping process waits for in-flight work (longer than Apple's slowest answers).
    public static let gracefulShutdownGrace: Duration = .seconds(30)

    /// Everything a service builder gets.
    public struct Context: Sendable {
        public let name: String
        public let configuration: StorekeeperConfiguration
        public let logger: Logger
        public let metrics: PrometheusCollectorRegistry
    }

    /// - Parameter validate: what this executable alone requires of the configuration.
    public static func run(
        name: String, validate: (StorekeeperConfiguration) throws -> Void = { _ in },
        makeServices: (Context) async throws -> [any Service]
    ) async -> Never {
        let configuration: StorekeeperConfiguration
        do {
            configuration = try StorekeeperConfiguration(reader: EnvironmentReader())
            try validate(configuration)
        } catch {
            FileHandle.standardError.write(Data("\(name): configuration error: \(error)\n".utf8))
            exit(configurationErrorStatus)
        }
        LoggingBootstrap.bootstrap(configuration.log, secrets: configuration.secrets)
        // A file-size limit reached (disk quota, RLIMIT_FSIZE) must be a failed write the service
        // answers and recovers from, not a signal that kills it.
        signal(SIGXFSZ, SIG_IGN)
        let openFiles = OpenFileLimit.raiseForConnections()
        let registry = MetricsBootstrap.bootstrap()
        var logger = Logger(label: name)
        logger[metadataKey: "pid"] = "\(getpid())"
        if openFiles.after != openFiles.before {
            logger.info(
                "open file limit raised to the hard limit",
                metadata: ["limit.before": "\(openFiles.before)", "limit.after": "\(openFiles.after)"])
        }
        logger.debug("descriptor table reserved", metadata: ["descriptor_table.slots": "\(openFiles.tableSlots ?? 0)"])
        for variable in configuration.unknownVariables {
            logger.warning("unknown configuration variable ignored", metadata: ["config.variable": "\(variable)"])
        }
        let context = Context(name: name, configuration: configuration, logger: logger, metrics: registry)
        do {
            var services = try await makeServices(context)
            if let address = configuration.metricsAddress {
                services.append(MetricsEndpoint(address: address, registry: registry, logger: logger))
            }
            services.insert(StartedAnnouncement(logger: logger, serviceCount: services.count), at: 0)
            var groupConfiguration = ServiceGroupConfiguration(
                services: services.map { .init(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger)
            // In-flight work (an HTTP request waiting on Apple, a commit) gets this long
            // after SIGTERM; then what is left is cancelled.
            groupConfiguration.maximumGracefulShutdownDuration = gracefulShutdownGrace
            let group = ServiceGroup(configuration: groupConfiguration)
            try await group.run()
            logger.info("stopped")
            exit(0)
        } catch {
            logger.critical("stopped on error", metadata: ["error": "\(error)"])
            exit(1)
        }
    }
}
