import Foundation

/// The gateway's JSON answers as lines a person reads. Pure: tested with
/// answers in the spec's shape.
enum AnswerText {
    /// `GET /v1/users/{id}/entitlements` or the `entitlements` of a receipt answer.
    static func entitlements(_ list: [[String: Any]]) -> [String] {
        guard !list.isEmpty else { return ["  (none)"] }
        return list.map { entitlement in
            let product = entitlement["product_id"] as? String ?? "?"
            let state = entitlement["state"] as? String ?? "?"
            var line = "  \(product)  \(state)"
            if let expires = milliseconds(entitlement["expires_date_ms"]) {
                line += "  until \(date(expires))"
            }
            if let autoRenew = entitlement["auto_renew"] as? Bool { line += autoRenew ? "  renews" : "  does not renew" }
            if let environment = entitlement["environment"] as? String { line += "  (\(environment))" }
            if let original = entitlement["original_transaction_id"] as? String { line += "  original \(original)" }
            return line
        }
    }

    /// A `POST /v1/receipts` answer.
    static func receipt(_ answer: [String: Any]) -> [String] {
        var lines: [String] = []
        let user = answer["user_id"] as? String ?? "?"
        let environment = answer["environment"] as? String ?? "?"
        lines.append("verified for \(user) (\(environment), \(answer["bundle_id"] as? String ?? "?"))")
        let granted = answer["granted"] as? [[String: Any]] ?? []
        lines.append("granted now: \(granted.count)")
        for grant in granted {
            lines.append("  \(grant["transaction_id"] as? String ?? "?")  \(grant["product_id"] as? String ?? "?")")
        }
        let already = answer["already_granted"] as? [String] ?? []
        lines.append("granted before: \(already.count)" + (already.isEmpty ? "" : "  " + already.joined(separator: " ")))
        let revoked = answer["revoked"] as? [[String: Any]] ?? []
        if !revoked.isEmpty {
            lines.append("revoked (refunded): " + revoked.compactMap { $0["transaction_id"] as? String }.joined(separator: " "))
        }
        if let transaction = answer["transaction"] as? [String: Any] {
            let found = transaction["found"] as? Bool ?? false
            lines.append("transaction \(transaction["transaction_id"] as? String ?? "?"): \(found ? "in the receipt" : "NOT in the receipt")")
        }
        lines.append("entitlements:")
        lines += entitlements(answer["entitlements"] as? [[String: Any]] ?? [])
        return lines
    }

    /// Apple's millisecond fields arrive as numbers here (the gateway's own JSON).
    private static func milliseconds(_ value: Any?) -> Int64? {
        (value as? NSNumber)?.int64Value ?? (value as? String).flatMap(Int64.init)
    }

    private static func date(_ milliseconds: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1_000))
    }
}
