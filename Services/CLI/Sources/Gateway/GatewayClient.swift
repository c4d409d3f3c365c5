import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The gateway's HTTP API as the CLI uses it: JSON in, JSON out, an error
/// answer turned into `GatewayClient.Failed` carrying the API's error object.
struct GatewayClient {
    let base: URL
    let apiKey: String?

    struct Failed: Error, CustomStringConvertible {
        let status: Int
        let code: String
        let message: String
        let retryable: Bool
        var description: String {
            "the gateway answered \(status) \(code): \(message)" + (retryable ? " (retryable: try again later)" : "")
        }
    }

    /// GET of the path made of `segments`, each percent-encoded once (a user id may hold anything printable).
    func get(_ segments: [String]) async throws -> Data {
        try await send(URLRequest(url: url(segments)))
    }

    func post(_ segments: [String], json body: [String: Any]) async throws -> Data {
        var request = URLRequest(url: url(segments))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        return try await send(request)
    }

    private func url(_ segments: [String]) -> URL {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let path = segments.map { $0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? $0 }.joined(separator: "/")
        let base = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return URL(string: base + "/" + path)!
    }

    private func send(_ request: URLRequest) async throws -> Data {
        var request = request
        request.timeoutInterval = 60
        if let apiKey { request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            let error = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] as? [String: Any]
            throw Failed(
                status: status, code: error?["code"] as? String ?? "http_\(status)",
                message: error?["message"] as? String ?? String(decoding: data.prefix(500), as: UTF8.self),
                retryable: error?["retryable"] as? Bool ?? false)
        }
        return data
    }
}
