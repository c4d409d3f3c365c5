/// Which addresses a verifier's pool workers connect to, as DNS says now: a
/// pure piece, with no sockets and no clock. `PoolDiscovery` feeds it each
/// round of lookups and carries out the changes it returns.
///
/// - A fixed endpoint (an IP literal, `localhost`, `ipc://`, `inproc://`)
///   is connected from the first round on and never retired.
/// - A named endpoint stands for every address its name resolves to, each
///   connected as `tcp://ADDRESS:PORT`. An address that appears is
///   connected; one that is no longer in the answer is retired.
/// - A failed lookup changes nothing: a DNS server that does not answer for a
///   moment must not cut a verifier off from gateways that still run. A name
///   that resolves to no address (it exists no more) retires all of its.
/// - The same address reached twice (two names, or a name and a literal) is
///   connected once.
public struct PoolDirectory: Sendable {
    public enum Change: Equatable, Sendable {
        /// Start a pool worker connected to this endpoint.
        case connect(String)
        /// Its address left DNS: the worker leaves the pool and stops.
        case retire(String)
    }

    public let endpoints: [PoolEndpoint]
    /// The last successful answer for each name.
    private var known: [String: [String]] = [:]
    /// What is connected now, in the order the endpoints and answers gave it.
    public private(set) var connected: [String] = []

    public init(endpoints: [PoolEndpoint]) {
        self.endpoints = endpoints
    }

    public init(endpoints: [String]) {
        self.init(endpoints: endpoints.map(PoolEndpoint.init))
    }

    /// The names to look up each round, each once.
    public var names: [String] {
        var names: [String] = []
        for case .named(let host, _) in endpoints where !names.contains(host) { names.append(host) }
        return names
    }

    /// Takes a round of answers (a name missing from `answers` keeps what it
    /// had) and returns what to retire, then what to connect.
    public mutating func update(_ answers: [String: Resolution]) -> [Change] {
        for (name, answer) in answers {
            if case .addresses(let addresses) = answer { known[name] = addresses }
        }
        var wanted: [String] = []
        for endpoint in endpoints {
            switch endpoint {
            case .fixed(let fixed):
                if !wanted.contains(fixed) { wanted.append(fixed) }
            case .named(let host, let port):
                for address in known[host] ?? [] {
                    let concrete = PoolEndpoint.tcp(address: address, port: port)
                    if !wanted.contains(concrete) { wanted.append(concrete) }
                }
            }
        }
        let retired = connected.filter { !wanted.contains($0) }.map(Change.retire)
        let added = wanted.filter { !connected.contains($0) }.map(Change.connect)
        connected = wanted
        return retired + added
    }
}
