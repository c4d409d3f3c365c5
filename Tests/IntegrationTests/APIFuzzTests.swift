import Foundation
import SeededRandom
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Random and hostile requests against every operation openapi.yaml documents
/// (and some it does not), through the real stack: no 5xx but the documented
/// 503, every error in the documented shape with a documented code, a request
/// id on every answer, and no process dies. Seeded: a failure can be replayed.
@Suite("HTTP API fuzz from openapi.yaml", .serialized)
struct APIFuzzTests {
    static let apiKey = "sk-fuzz-0123456789"
    static let requests = ProcessInfo.processInfo.environment["STOREKEEPER_TEST_LONG"] == "1" ? 20_000 : 600

    @Test func hostileRequestsGetDocumentedAnswersAndKillNothing() async throws {
        let document = try String(contentsOf: Self.openAPIURL, encoding: .utf8)
        let operations = Self.operations(in: document)
        let codes = Self.errorCodes(in: document)
        try #require(operations.count >= 5 && codes.count >= 10)
        try await UpStack.run(environment: ["STOREKEEPER_API_KEYS": Self.apiKey]) { stack in
            var random = SplitMix64(seed: 0x5EED_F00D)
            var statuses: [Int: Int] = [:]
            for index in 0..<Self.requests {
                var request = Self.request(index, operations, base: stack.gateway, &random)
                request.timeoutInterval = 60
                let (data, response) = try await URLSession.shared.data(for: request)
                let http = try #require(response as? HTTPURLResponse)
                statuses[http.statusCode, default: 0] += 1
                let what = "#\(index) \(request.httpMethod ?? "?") \(request.url?.path ?? "?") → \(http.statusCode)"
                #expect(http.statusCode < 500 || http.statusCode == 503, "\(what)")
                #expect(http.value(forHTTPHeaderField: "X-Request-Id")?.isEmpty == false, "\(what): no request id")
                // /readyz answers its own shape; a HEAD answer has no body.
                guard http.statusCode >= 400, request.url?.path != "/readyz", request.httpMethod != "HEAD" else { continue }
                let error = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["error"] as? [String: Any]
                #expect(error.flatMap { $0["code"] as? String }.map(codes.contains) == true, "\(what): \(String(decoding: data.prefix(300), as: UTF8.self))")
                #expect(error?["message"] is String && error?["retryable"] is Bool, "\(what): error shape")
            }
            #expect(!stack.up.captured.contains("exited; restarting"), "a process died under the fuzz")
            print("API fuzz: \(Self.requests) requests, statuses \(statuses.sorted { $0.key < $1.key })")
        }
    }

    static var openAPIURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("openapi.yaml")
    }

    /// ("POST", "/v1/receipts") pairs under `paths:`.
    static func operations(in document: String) -> [(method: String, path: String)] {
        var operations: [(String, String)] = []
        var path: String?
        for line in document.split(separator: "\n").drop(while: { $0 != "paths:" }) {
            if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()) }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("    "), !line.hasPrefix("     "), ["get:", "post:"].contains(trimmed), let path {
                operations.append((trimmed.dropLast().uppercased(), path))
            }
        }
        return operations
    }

    /// The error codes the document lists.
    static func errorCodes(in document: String) -> Set<String> {
        guard let start = document.range(of: "enum: [bad_request"), let end = document[start.upperBound...].firstIndex(of: "]")
        else { return [] }
        let list = document[document.index(start.lowerBound, offsetBy: 7)..<end]
        return Set(list.split(whereSeparator: { ", \n".contains($0) }).map(String.init))
    }

    static let strings = [
        "", " ", "u-1", String(repeating: "x", count: 129), "ü🙂", "a/b", "%00", "%zz", "\u{0}", "line\nbreak",
        "MIIT+abc/def==", "TUlJVA", "data:application/octet-stream;base64,TUlJVA", String(repeating: "A", count: 70_000),
    ]

    /// One request: a documented operation with a hostile body, headers and path, or an undocumented one.
    static func request(_ index: Int, _ operations: [(method: String, path: String)], base: String, _ random: inout SplitMix64) -> URLRequest {
        var (method, path) = operations[Int(random.next() % UInt64(operations.count))]
        if random.next() % 10 == 0 { method = ["PUT", "DELETE", "PATCH", "HEAD"][Int(random.next() % 4)] }
        if random.next() % 20 == 0 { path = "/v1/nothing-\(index)" }
        let user = strings[Int(random.next() % UInt64(strings.count))]
        path = path.replacingOccurrences(
            of: "{user_id}", with: user.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "u")
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        switch random.next() % 10 {
        case 0: break
        case 1: request.setValue("Bearer \(apiKey)x", forHTTPHeaderField: "Authorization")
        case 2: request.setValue("Basic \(apiKey)", forHTTPHeaderField: "Authorization")
        default: request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization")
        }
        guard method == "POST" || method == "PUT" || method == "PATCH" else { return request }
        let (body, contentType) = Self.body(&random)
        request.httpBody = body
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        return request
    }

    static func body(_ random: inout SplitMix64) -> (Data, String?) {
        func pick() -> Any {
            switch random.next() % 8 {
            case 0: return NSNull()
            case 1: return Int(truncatingIfNeeded: random.next())
            case 2: return random.next() % 2 == 0
            case 3: return [strings[Int(random.next() % UInt64(strings.count))]]
            case 4: return ["nested": strings[Int(random.next() % UInt64(strings.count))]]
            default: return strings[Int(random.next() % UInt64(strings.count))]
            }
        }
        switch random.next() % 9 {
        case 0:
            return (Data((0..<Int(random.next() % 2_000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }), "application/json")
        case 1:
            return (Data("user_id=\(strings[Int(random.next() % 5)])&receipt-data=MIIT+abc/de f&&=%%".utf8), "application/x-www-form-urlencoded")
        case 2:
            return (Data((String(repeating: "[", count: 50_000) + String(repeating: "]", count: 50_000)).utf8), "application/json")
        case 3:
            return (Data(repeating: UInt8(ascii: "a"), count: 1_100_000), "application/json")
        case 4:
            return (Data("{\"signedPayload\": \"x.y.z\"}".utf8), ["application/json", "text/plain", nil][Int(random.next() % 3)])
        default:
            var object: [String: Any] = [:]
            for key in ["user_id", "receipt_data", "receipt-data", "product_id", "transaction_id", "exclude_old_transactions",
                "password", "notification_type", "unified_receipt"] where random.next() % 2 == 0 {
                object[key] = pick()
            }
            let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
            return (data, ["application/json", "application/x-www-form-urlencoded", "text/plain", nil][Int(random.next() % 4)])
        }
    }
}
