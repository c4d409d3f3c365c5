import ArgumentParser

// How the bench stack's processes reach each other over ZeroMQ: TCP on
// loopback ports (what a deployment across hosts needs), or Unix domain
// sockets (`ipc://`), possible when they share a host.
enum ZeroMQTransport: String, CaseIterable, ExpressibleByArgument {
    case tcp
    case ipc

    /// The five internal endpoints: on `ports` for TCP, as socket files in `directory` for IPC.
    func endpoints(ports: [Int], directory: String) -> [String: String] {
        let names = ["VERIFIER", "LEDGER", "EVENTS", "REPLAY", "REFRESH"]
        return Dictionary(uniqueKeysWithValues: zip(names, ports).map { name, port in
            let endpoint = switch self {
            case .tcp: "tcp://127.0.0.1:\(port)"
            case .ipc: "ipc://\(directory)/\(name.lowercased()).sock"
            }
            return ("STOREKEEPER_\(name)_ENDPOINT", endpoint)
        })
    }
}
