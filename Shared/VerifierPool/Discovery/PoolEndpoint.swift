#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A pool endpoint a verifier is given, as it will connect to it.
///
/// `tcp://NAME:PORT` with a DNS name is a set of gateways (one name for a
/// compose service or a Kubernetes headless service): the verifier resolves
/// it to every address and connects to each. Anything else is connected as
/// written, as before: an IP literal, `localhost` (libzmq resolves it; a
/// `::1` answer nobody listens on would only hold a share of the capacity
/// idle), `ipc://` and `inproc://`.
public enum PoolEndpoint: Hashable, Sendable {
    case fixed(String)
    case named(host: String, port: Int)

    public init(_ endpoint: String) {
        guard endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":"),
            let port = Int(endpoint[endpoint.index(after: colon)...]), (1...65_535).contains(port)
        else {
            self = .fixed(endpoint)
            return
        }
        let host = String(endpoint[endpoint.index(endpoint.startIndex, offsetBy: 6)..<colon])
        let isName = !host.isEmpty && !host.hasPrefix("[") && host != "*" && host.lowercased() != "localhost"
            && !Self.isIPLiteral(host)
        self = isName ? .named(host: host, port: port) : .fixed(endpoint)
    }

    /// `tcp://ADDRESS:PORT`, an IPv6 address in brackets.
    public static func tcp(address: String, port: Int) -> String {
        address.contains(":") ? "tcp://[\(address)]:\(port)" : "tcp://\(address):\(port)"
    }

    /// Whether `endpoint` is a TCP endpoint with an IPv6 address (the socket must allow IPv6).
    public static func isIPv6(_ endpoint: String) -> Bool { endpoint.hasPrefix("tcp://[") }

    static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
