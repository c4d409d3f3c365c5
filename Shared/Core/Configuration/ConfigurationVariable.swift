/// Every `STOREKEEPER_*` variable, its default and its meaning: the one table
/// the readers, `storekeeper config` and the README's list come from.
public enum ConfigurationVariable: String, CaseIterable, Sendable {
    // The external contract's variables (spec: Executables and configuration).
    case appleProductionURL = "STOREKEEPER_APPLE_PRODUCTION_URL"
    case appleSandboxURL = "STOREKEEPER_APPLE_SANDBOX_URL"
    case appleSharedSecret = "STOREKEEPER_APPLE_SHARED_SECRET"
    case bundleIDs = "STOREKEEPER_BUNDLE_IDS"
    case httpAddress = "STOREKEEPER_HTTP_ADDR"
    case apiKeys = "STOREKEEPER_API_KEYS"
    case bindingPolicy = "STOREKEEPER_BINDING_POLICY"
    case dataDirectory = "STOREKEEPER_DATA_DIR"
    case eventsEndpoint = "STOREKEEPER_EVENTS_ENDPOINT"
    // Internal ZeroMQ endpoints.
    case verifierEndpoint = "STOREKEEPER_VERIFIER_ENDPOINT"
    case ledgerEndpoint = "STOREKEEPER_LEDGER_ENDPOINT"
    case replayEndpoint = "STOREKEEPER_REPLAY_ENDPOINT"
    case refreshEndpoint = "STOREKEEPER_REFRESH_ENDPOINT"
    // Apple calls.
    case verifyDeadline = "STOREKEEPER_VERIFY_DEADLINE_MS"
    case appleConnectTimeout = "STOREKEEPER_APPLE_CONNECT_TIMEOUT_MS"
    case appleAttemptTimeout = "STOREKEEPER_APPLE_ATTEMPT_TIMEOUT_MS"
    case verifierMaxInFlight = "STOREKEEPER_VERIFIER_MAX_IN_FLIGHT"
    case jwsExtraRoots = "STOREKEEPER_JWS_EXTRA_ROOTS"
    case acceptSandbox = "STOREKEEPER_ACCEPT_SANDBOX"
    case catalog = "STOREKEEPER_CATALOG"
    case databaseURL = "STOREKEEPER_DATABASE_URL"
    // Gateway and ledger limits.
    case maxBodyBytes = "STOREKEEPER_MAX_BODY_BYTES"
    case httpReadTimeout = "STOREKEEPER_HTTP_READ_TIMEOUT_MS"
    case rateLimitPerMinute = "STOREKEEPER_RATE_LIMIT_PER_MINUTE"
    case eventRetentionHours = "STOREKEEPER_EVENT_RETENTION_HOURS"
    case refreshPerMinute = "STOREKEEPER_REFRESH_PER_MINUTE"
    case ledgerSweepInterval = "STOREKEEPER_LEDGER_SWEEP_INTERVAL_MS"
    // Simulator.
    case simulatorAddress = "STOREKEEPER_SIM_ADDR"
    case simulatorNotificationURL = "STOREKEEPER_SIM_NOTIFICATION_URL"
    case simulatorNotificationVersion = "STOREKEEPER_SIM_NOTIFICATION_VERSION"
    // Observability.
    case logLevel = "STOREKEEPER_LOG_LEVEL"
    case logFormat = "STOREKEEPER_LOG_FORMAT"
    case metricsAddress = "STOREKEEPER_METRICS_ADDR"

    /// The value used when the variable is unset or empty; nil when there is none.
    public var defaultValue: String? {
        switch self {
        case .appleProductionURL: "https://buy.itunes.apple.com/verifyReceipt"
        case .appleSandboxURL: "https://sandbox.itunes.apple.com/verifyReceipt"
        case .appleSharedSecret, .bundleIDs, .apiKeys, .simulatorNotificationURL, .metricsAddress, .jwsExtraRoots, .catalog,
            .databaseURL: nil
        case .httpAddress: "127.0.0.1:8080"
        case .bindingPolicy: "transfer"
        case .dataDirectory: "./data"
        case .eventsEndpoint: "tcp://127.0.0.1:7420"
        case .verifierEndpoint: "tcp://127.0.0.1:7421"
        case .ledgerEndpoint: "tcp://127.0.0.1:7422"
        case .replayEndpoint: "tcp://127.0.0.1:7423"
        case .refreshEndpoint: "tcp://127.0.0.1:7424"
        case .verifyDeadline: "30000"
        case .appleConnectTimeout: "5000"
        case .appleAttemptTimeout: "15000"
        case .verifierMaxInFlight: "4096"
        case .acceptSandbox: "true"
        case .maxBodyBytes: "1048576"
        case .httpReadTimeout: "10000"
        case .rateLimitPerMinute: "60000"
        case .eventRetentionHours: "168"
        case .refreshPerMinute: "60"
        case .ledgerSweepInterval: "10000"
        case .simulatorAddress: "127.0.0.1:8090"
        case .simulatorNotificationVersion: "1"
        case .logLevel: "info"
        case .logFormat: "text"
        }
    }

    /// Never printed, logged or put in an error description.
    public var isSecret: Bool { self == .appleSharedSecret || self == .apiKeys || self == .databaseURL }

    public var meaning: String {
        switch self {
        case .appleProductionURL: "production verifyReceipt"
        case .appleSandboxURL: "sandbox verifyReceipt"
        case .appleSharedSecret: "app-specific or primary shared secret, sent as password; never logged"
        case .bundleIDs:
            "comma list, required by the gateway and the verifiers; a receipt of any other bundle is rejected (bundle_mismatch); signed data is accepted only for these"
        case .httpAddress: "gateway listen address"
        case .apiKeys: "comma list; when set, /v1/receipts, /v1/transactions and /v1/users/* require Authorization: Bearer KEY"
        case .bindingPolicy: "transfer (a purchase seen under a new user moves to it) or keep (409 already_bound)"
        case .dataDirectory: "where the ledger keeps its SQLite database"
        case .eventsEndpoint: "the ledger's event PUB socket (ledger binds)"
        case .verifierEndpoint:
            "gateway <-> verifier pool (gateway binds the first item; verifiers connect to every item, and to every address a host name resolves to, looked up again every 5 s)"
        case .ledgerEndpoint: "gateway -> ledger requests (ledger binds)"
        case .replayEndpoint: "event replay requests (ledger binds)"
        case .refreshEndpoint: "ledger <-> verifier pool for subscription refreshes (ledger binds, verifiers connect)"
        case .verifyDeadline: "overall deadline of one verification, retries included (ms)"
        case .appleConnectTimeout: "connect time-out of one Apple call (ms)"
        case .appleAttemptTimeout: "total time-out of one Apple call (ms)"
        case .verifierMaxInFlight: "Apple calls one verifier keeps in flight before it pushes back"
        case .jwsExtraRoots:
            "comma list of PEM files whose certificates are trusted beside Apple Root CA - G3 for signed transactions and v2 notifications (tests and the simulator only; unset in production)"
        case .acceptSandbox:
            "false: sandbox receipts and signed data are 422 sandbox_not_accepted and sandbox notifications are acknowledged unapplied (App Review and TestFlight use sandbox: only for deployments that know they want it)"
        case .catalog:
            "YAML or JSON file: each product's type (auto_renewable, non_renewing, non_consumable, consumable), a non_renewing duration (ISO 8601) and the access names it unlocks; read by the ledger, checked at start"
        case .databaseURL:
            "postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=disable|require|verify-full: the ledger on PostgreSQL (several ledgers may share it); unset: SQLite in STOREKEEPER_DATA_DIR; the password is never logged"
        case .maxBodyBytes: "largest accepted request body (bytes)"
        case .httpReadTimeout: "a connection that sends nothing of a request (headers or body) for this long is closed (slow clients)"
        case .rateLimitPerMinute: "requests a minute per API key (per client address when keys are off); 0: no limit"
        case .eventRetentionHours: "how long the ledger keeps events for replay (hours)"
        case .refreshPerMinute: "expired auto-renewing subscriptions the ledger re-verifies per minute (0: never)"
        case .ledgerSweepInterval: "how often the ledger looks for expiries and due refreshes (ms)"
        case .simulatorAddress: "storekeeper-sim listen address"
        case .simulatorNotificationURL: "where storekeeper-sim sends server notifications"
        case .simulatorNotificationVersion:
            "1 (JSON with password and unified_receipt) or 2 (signedPayload, signed with the simulator's test chain)"
        case .logLevel: "trace, debug, info, notice, warning, error or critical"
        case .logFormat: "text (human) or json (one JSON object a line)"
        case .metricsAddress: "host:port serving /metrics for the verifier, ledger and sim (off when unset)"
        }
    }
}
