import Contracts
import CurlHTTP
import Foundation

/// One App Store Server API call as Storekeeper builds it, before it has an
/// environment, a token or a transport: method, path, query and body. Pure,
/// so what goes to Apple is tested without a socket.
struct ServerAPIRequest: Sendable, Equatable {
    /// A bounded name for logs and metrics (`transaction_info`, `history`, ...).
    let name: String
    let method: HTTPMethod
    /// Already percent-encoded, from the root: `/inApps/v1/transactions/2000000123456789`.
    let path: String
    /// `name=value&...`, percent-encoded; empty for none.
    let query: String
    /// JSON for POST and PUT; empty for GET.
    let body: [UInt8]
    /// About a transaction id: asked at production first, and at sandbox when
    /// production knows no such transaction (4040010), as verifyReceipt's 21007 rule.
    let fallsBackToSandbox: Bool

    /// Apple's answers hold at most a page of JWS (~20 x 3 KiB); far below this.
    static let maxResponseBytes = 4 * 1_048_576

    /// The same call, kept to the environment that answered before (the next page of a history).
    var withoutFallback: ServerAPIRequest {
        ServerAPIRequest(name: name, method: method, path: path, query: query, body: body, fallsBackToSandbox: false)
    }

    /// The call for `environment` alone when one is named (no fallback), else as it is.
    func restricted(to environment: AppleEnvironment?) -> ServerAPIRequest {
        environment == nil ? self : withoutFallback
    }

    /// The HTTP request to `baseURL` (`https://api.storekit.itunes.apple.com`, no trailing slash needed).
    func httpRequest(baseURL: String, token: String, connectTimeout: Duration, totalTimeout: Duration) -> HTTPRequest {
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        var headers: [(name: String, value: String)] = [("Authorization", "Bearer \(token)"), ("Accept", "application/json")]
        if method != .get { headers.append(("Content-Type", "application/json")) }
        return HTTPRequest(
            method: method, url: base + path + (query.isEmpty ? "" : "?" + query), headers: headers, body: body,
            connectTimeout: connectTimeout, totalTimeout: totalTimeout, maxResponseBytes: Self.maxResponseBytes)
    }

    /// `prefix` and one identifier segment, percent-encoded so an id can never
    /// reach another path (a `/` or `?` in it is sent as `%2F`, `%3F`).
    static func path(_ prefix: String, _ identifier: String) -> String {
        prefix + "/" + encoded(identifier)
    }

    static func query(_ items: [(name: String, value: String?)]) -> String {
        items.compactMap { item in item.value.map { "\(item.name)=\(encoded($0))" } }.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    private static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
