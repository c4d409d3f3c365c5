/// The ZeroMQ endpoints between the processes.
public struct EndpointSettings: Sendable {
    /// `STOREKEEPER_EVENTS_ENDPOINT`: the ledger's event PUB socket (ledger binds).
    public var events: String
    /// `STOREKEEPER_VERIFIER_ENDPOINT`: the verifier pool (gateway binds, verifiers connect).
    /// A comma list lets verifiers serve several gateways; a gateway binds the first. A verifier
    /// connects to every address a host name resolves to, and follows DNS (`PoolDiscovery`), so
    /// one name can stand for every gateway, those started later included.
    public var verifiers: [String]
    public var verifier: String { verifiers[0] }
    /// `STOREKEEPER_LEDGER_ENDPOINT`: record, notification and entitlement requests (ledger binds).
    /// A comma list lets a gateway spread its requests over several ledgers (on PostgreSQL);
    /// a ledger binds the first.
    public var ledgers: [String]
    public var ledger: String { ledgers[0] }
    /// `STOREKEEPER_REPLAY_ENDPOINT`: event replay for subscribers that fell behind (ledger binds).
    public var replay: String
    /// `STOREKEEPER_REFRESH_ENDPOINT`: the ledger's own verifier pool for refreshes (ledger binds, verifiers connect).
    public var refresh: String

    public init(reader: EnvironmentReader) throws(ConfigurationError) {
        typealias V = ConfigurationVariable
        events = try reader.zmqEndpoint(.eventsEndpoint)
        verifiers = try reader.zmqEndpoints(.verifierEndpoint)
        ledgers = try reader.zmqEndpoints(.ledgerEndpoint)
        replay = try reader.zmqEndpoint(.replayEndpoint)
        refresh = try reader.zmqEndpoint(.refreshEndpoint)
        let all = [
            (V.eventsEndpoint, events), (V.verifierEndpoint, verifier), (V.ledgerEndpoint, ledger),
            (V.replayEndpoint, replay), (V.refreshEndpoint, refresh),
        ]
        for (index, (variable, endpoint)) in all.enumerated() {
            if let clash = all[..<index].first(where: { $0.1 == endpoint }) {
                throw ConfigurationError(
                    variable: variable.rawValue, reason: "uses the same endpoint as \(clash.0.rawValue) (\(endpoint))")
            }
        }
    }
}
