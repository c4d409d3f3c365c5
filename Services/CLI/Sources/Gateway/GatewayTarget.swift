import ArgumentParser
import Foundation
import StorekeeperCore

/// Which gateway a command talks to, and with which API key.
struct GatewayTarget: ParsableArguments {
    @Option(help: "The gateway's base URL (default: http://STOREKEEPER_HTTP_ADDR).")
    var gateway: String?

    @Option(help: "The bearer API key (default: the first of STOREKEEPER_API_KEYS, if set).")
    var apiKey: String?

    var client: GatewayClient {
        get throws {
            let configuration = try StorekeeperConfiguration(reader: EnvironmentReader())
            let base = gateway ?? Self.localURL(of: configuration.gateway.httpAddress)
            guard let url = URL(string: base), url.scheme != nil else {
                throw ValidationError("--gateway is not a URL: \(base)")
            }
            return GatewayClient(base: url, apiKey: apiKey ?? configuration.gateway.apiKeys.first?.revealed)
        }
    }

    /// The gateway as reached from this machine: a wildcard listen address is reached on loopback.
    static func localURL(of address: SocketAddress) -> String {
        let host = ["0.0.0.0", "::", ""].contains(address.host) ? "127.0.0.1" : address.host
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(address.port)"
    }
}
