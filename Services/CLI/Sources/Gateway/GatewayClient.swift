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

    func get(_ path: String) async throws -> Data {
        try await send(URLRequest(url: base.appendingPathComponent(path)))
    }

    func post(_ path: String, json body: [String: Any]) async throws -> Data {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        return try await send(request)
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
