import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange as the tests look at it: status, JSON body, headers (lower-cased names).
struct HTTPAnswer {
    var status: Int
    var json: [String: Any]
    var headers: [String: String]
    /// The body as it came, for byte-for-byte comparisons.
    var body: Data

    static func call(
        _ method: String, _ url: String, json body: [String: Any]? = nil, requestID: String? = nil,
        headers extra: [String: String] = [:]
    ) async throws -> HTTPAnswer {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.timeoutInterval = 120
        if let body {
            // Sorted keys: the same object is the same bytes (an Idempotency-Key binds the body).
            request.httpBody = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let requestID { request.setValue(requestID, forHTTPHeaderField: "X-Request-Id") }
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http?.allHeaderFields ?? [:] { headers["\(key)".lowercased()] = "\(value)" }
        return HTTPAnswer(
            status: http?.statusCode ?? 0, json: (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:],
            headers: headers, body: data)
    }
}
