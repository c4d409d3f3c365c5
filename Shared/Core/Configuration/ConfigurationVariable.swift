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
    case appleCAFile = "STOREKEEPER_APPLE_CA_FILE"
    case jwsExtraRoots = "STOREKEEPER_JWS_EXTRA_ROOTS"
    case acceptSandbox = "STOREKEEPER_ACCEPT_SANDBOX"
    case catalog = "STOREKEEPER_CATALOG"
    case databaseURL = "STOREKEEPER_DATABASE_URL"
    // The App Store Server API.
    case appleIssuerID = "STOREKEEPER_APPLE_ISSUER_ID"
    case appleKeyID = "STOREKEEPER_APPLE_KEY_ID"
    case applePrivateKeyFile = "STOREKEEPER_APPLE_PRIVATE_KEY_FILE"
    case appleAppID = "STOREKEEPER_APPLE_APP_ID"
    case appleAPIProductionURL = "STOREKEEPER_APPLE_API_PRODUCTION_URL"
    case appleAPISandboxURL = "STOREKEEPER_APPLE_API_SANDBOX_URL"
    case receiptVerification = "STOREKEEPER_RECEIPT_VERIFICATION"
    // Gateway and ledger limits.
    case maxBodyBytes = "STOREKEEPER_MAX_BODY_BYTES"
    case httpReadTimeout = "STOREKEEPER_HTTP_READ_TIMEOUT_MS"
    case httpThreads = "STOREKEEPER_HTTP_THREADS"
    case rateLimitPerMinute = "STOREKEEPER_RATE_LIMIT_PER_MINUTE"
    case eventRetentionHours = "STOREKEEPER_EVENT_RETENTION_HOURS"
    case refreshPerMinute = "STOREKEEPER_REFRESH_PER_MINUTE"
    case ledgerSweepInterval = "STOREKEEPER_LEDGER_SWEEP_INTERVAL_MS"
    case notificationCatchUpSeconds = "STOREKEEPER_NOTIFICATION_CATCHUP_SECONDS"
    case sendConsumptionInfo = "STOREKEEPER_SEND_CONSUMPTION_INFO"
    // Simulator.
    case simulatorAddress = "STOREKEEPER_SIM_ADDR"
    case simulatorNotificationURL = "STOREKEEPER_SIM_NOTIFICATION_URL"
    case simulatorNotificationVersion = "STOREKEEPER_SIM_NOTIFICATION_VERSION"
    case simulatorPageSize = "STOREKEEPER_SIM_PAGE_SIZE"
    case simulatorTLSAddress = "STOREKEEPER_SIM_TLS_ADDR"
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
            .databaseURL, .appleIssuerID, .appleKeyID, .applePrivateKeyFile, .appleAppID, .simulatorTLSAddress,
            .appleCAFile: nil
        case .appleAPIProductionURL: "https://api.storekit.itunes.apple.com"
        case .appleAPISandboxURL: "https://api.storekit-sandbox.itunes.apple.com"
        case .receiptVerification: "verify_receipt"
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
        case .verifierMaxInFlight: "8192"
        case .acceptSandbox: "true"
        case .maxBodyBytes: "1048576"
        case .httpReadTimeout: "10000"
        case .httpThreads: "1"
        case .rateLimitPerMinute: "60000"
        case .eventRetentionHours: "168"
        case .refreshPerMinute: "60"
        case .ledgerSweepInterval: "10000"
        case .notificationCatchUpSeconds: "300"
        case .sendConsumptionInfo: "false"
        case .simulatorAddress: "127.0.0.1:8090"
        case .simulatorNotificationVersion: "1"
        case .simulatorPageSize: "20"
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
        case .appleCAFile:
            "a PEM file of the certificates trusted for Apple's https endpoints instead of the system's (tests and the simulator's STOREKEEPER_SIM_TLS_ADDR only; unset in production)"
        case .jwsExtraRoots:
            "comma list of PEM files whose certificates are trusted beside Apple Root CA - G3 for signed transactions and v2 notifications (tests and the simulator only; unset in production)"
        case .acceptSandbox:
            "false: sandbox receipts and signed data are 422 sandbox_not_accepted and sandbox notifications are acknowledged unapplied (App Review and TestFlight use sandbox: only for deployments that know they want it)"
        case .catalog:
            "YAML or JSON file: each product's type (auto_renewable, non_renewing, non_consumable, consumable), a non_renewing duration (ISO 8601) and the access names it unlocks; read by the ledger, checked at start"
        case .databaseURL:
            "postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=disable|require|verify-full: the ledger on PostgreSQL (several ledgers may share it); unset: SQLite in STOREKEEPER_DATA_DIR; the password is never logged"
        case .appleIssuerID:
            "App Store Server API: the issuer id of the App Store Connect key; with STOREKEEPER_APPLE_KEY_ID and STOREKEEPER_APPLE_PRIVATE_KEY_FILE (all three or none: none turns the Server API off)"
        case .appleKeyID: "App Store Server API: the App Store Connect key's id (10 characters)"
        case .applePrivateKeyFile:
            "App Store Server API: the .p8 file of that key (P-256, PKCS#8 PEM); read by the verifiers and `storekeeper apple`, never logged"
        case .appleAppID:
            "the app's numeric Apple ID: production data from the App Store Server API must carry it (appAppleId); required with the Server API credentials"
        case .appleAPIProductionURL: "App Store Server API, production base URL"
        case .appleAPISandboxURL: "App Store Server API, sandbox base URL (asked when production answers 4040010)"
        case .receiptVerification:
            "how the verifiers answer POST /v1/receipts: verify_receipt (Apple's verifyReceipt checks the receipt) or server_api (the receipt's ids read locally, its signature unchecked; its purchases from the App Store Server API's signed history; needs its credentials)"
        case .maxBodyBytes: "largest accepted request body (bytes)"
        case .httpReadTimeout: "a connection that sends nothing of a request (headers or body) for this long is closed (slow clients)"
        case .httpThreads:
            "the gateway's event-loop threads, which serve HTTP and run its request tasks; with one, every answer is written by the event loop that read its request, with no hand-off between event loops; raise it when one core is not enough for one gateway"
        case .rateLimitPerMinute: "requests a minute per API key (per client address when keys are off); 0: no limit"
        case .eventRetentionHours: "how long the ledger keeps events for replay (hours)"
        case .refreshPerMinute: "expired auto-renewing subscriptions the ledger re-verifies per minute (0: never)"
        case .ledgerSweepInterval: "how often the ledger looks for expiries and due refreshes (ms)"
        case .notificationCatchUpSeconds:
            "how often the ledger pulls the App Store Server API's notification history and applies what it missed (seconds; 0: never); needs the verifiers' Server API credentials"
        case .sendConsumptionInfo:
            "true: answer each CONSUMPTION_REQUEST with Send Consumption Information built from the ledger's records; turning it on states that customers consented to sharing it"
        case .simulatorAddress: "storekeeper-sim listen address"
        case .simulatorNotificationURL: "where storekeeper-sim sends server notifications"
        case .simulatorNotificationVersion:
            "1 (JSON with password and unified_receipt) or 2 (signedPayload, signed with the simulator's test chain)"
        case .simulatorTLSAddress:
            "a second storekeeper-sim listen address, serving the same routes over TLS (HTTP/2 or HTTP/1.1 by ALPN, as Apple's endpoints) with a test certificate for 127.0.0.1 and localhost; off when unset"
        case .simulatorPageSize: "items per page of the simulator's App Store Server API answers (history, notification history; Apple's: 20)"
        case .logLevel: "trace, debug, info, notice, warning, error or critical"
        case .logFormat: "text (human) or json (one JSON object a line)"
        case .metricsAddress: "host:port serving /metrics for the verifier, ledger and sim (off when unset)"
        }
    }
}
