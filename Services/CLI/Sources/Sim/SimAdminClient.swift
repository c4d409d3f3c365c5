import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Calls the simulator's admin API (`storekeeper-sim`, STOREKEEPER_SIM_ADDR).
struct SimAdminClient {
    let base: URL

    struct Failed: Error, CustomStringConvertible {
        let status: Int
        let body: String
        var description: String { "the simulator answered \(status): \(body)" }
    }

    /// POSTs `body` as JSON to `path`; the answer's JSON text.
    func post(_ path: String, _ body: [String: Any]) async throws -> String {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        return try await send(request)
    }

    /// GETs `path`; the answer's JSON text.
    func get(_ path: String) async throws -> String {
        try await send(URLRequest(url: base.appendingPathComponent(path)))
    }

    private func send(_ request: URLRequest) async throws -> String {
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let text = String(decoding: data, as: UTF8.self)
        guard status == 200 else { throw Failed(status: status, body: text) }
        return text
    }
}
