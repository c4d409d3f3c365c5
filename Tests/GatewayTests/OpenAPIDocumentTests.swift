import Foundation
import Hummingbird
import Testing

@testable import Gateway

/// openapi.yaml and the router describe the same API: every documented
/// operation is routed, and every route is documented.
@Suite("openapi.yaml matches the routes")
struct OpenAPIDocumentTests {
    /// (METHOD, path) pairs from the document's `paths:` section (path templates as `{name}`).
    static func documentedOperations() throws -> Set<String> {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("openapi.yaml")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "paths:") else { return [] }
        var operations: Set<String> = []
        var path: String?
        for line in lines[(start + 1)...] {
            if line.hasPrefix("  /"), line.hasSuffix(":") { path = String(line.dropFirst(2).dropLast()) }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("    "), !line.hasPrefix("     "), ["get:", "post:", "put:", "delete:", "patch:"].contains(trimmed),
                let path
            {
                operations.insert("\(trimmed.dropLast().uppercased()) \(path)")
            }
        }
        return operations
    }

    /// (METHOD, path) pairs the router serves, with `:name` shown as `{name}`.
    static func routedOperations() -> Set<String> {
        let router = GatewayRouter.make(
            .init(
                orchestrator: ReceiptOrchestrator(verify: { $0 }, ledger: LedgerDouble(), verifyDeadline: .seconds(1)),
                ledger: LedgerDouble(), readiness: { .init(ledger: true, verifiers: 1) },
                settings: try! .init(reader: .init([:])), sharedSecret: nil, bundleIDs: [],
                metrics: .init()))
        return Set(
            router.routes.map { route in
                let path = route.path.description.split(separator: "/").map { component in
                    component.hasPrefix(":") ? "{\(component.dropFirst())}" : String(component)
                }.joined(separator: "/")
                return "\(route.method.rawValue) /\(path)"
            })
    }

    @Test func everyRouteIsDocumentedAndEveryDocumentedOperationRouted() throws {
        let documented = try Self.documentedOperations()
        let routed = Self.routedOperations()
        #expect(documented.count >= 6)
        #expect(documented == routed, "only documented: \(documented.subtracting(routed)); only routed: \(routed.subtracting(documented))")
    }
}
