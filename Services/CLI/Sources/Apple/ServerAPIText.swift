import AppleFormats
import AppleJWS
import Contracts
import Foundation
import Verifier

/// The Server API client's answers as lines a person reads, or as JSON with
/// every JWS replaced by its decoded payload. Pure: tested with answers the
/// simulator signs.
enum ServerAPIText {
    static func transactions(_ title: String, _ answer: ServerAPITransactions) -> [String] {
        var lines = ["\(title) (\(name(answer.environment))): \(count(answer.transactions.count, "transaction"))"
            + (answer.revision.map { ", revision \($0)" } ?? "")]
        lines += answer.transactions.map { "  " + line($0) }
        return lines
    }

    static func statuses(_ answer: ServerAPISubscriptionStatuses) -> [String] {
        var lines = ["subscriptions (\(name(answer.environment))): \(answer.subscriptions.count)"]
        for subscription in answer.subscriptions {
            var line = "  \(subscription.originalTransactionID)  \(subscription.transaction.productID)  \(status(subscription.status))"
            if subscription.transaction.hasExpiresDateMs { line += "  until \(date(subscription.transaction.expiresDateMs))" }
            if let renewal = subscription.renewal, renewal.hasAutoRenewStatus {
                line += renewal.autoRenewStatus ? "  renews to \(renewal.autoRenewProductID)" : "  does not renew"
            }
            lines.append(line)
        }
        return lines
    }

    static func notification(_ token: String?, _ notification: ServerAPINotification) -> [String] {
        var lines = [
            "\(notification.apply.notificationType) notification \(notification.apply.notificationID) (\(name(notification.apply.environment)))"
                + (token.map { ", token \($0)" } ?? "")
        ]
        if notification.sendAttempts.isEmpty { lines.append("  not sent yet") }
        for attempt in notification.sendAttempts {
            lines.append("  \(attempt.sendAttemptResult ?? "?")  \(attempt.attemptDate.map(date) ?? "?")")
        }
        return lines
    }

    static func order(_ orderID: String, _ order: ServerAPIOrder) -> [String] {
        guard order.isValid else { return ["order \(orderID): not found (status 1: unknown, or another app's)"] }
        return transactions("order \(orderID)", order.transactions)
    }

    static func extended(_ originalTransactionID: String, _ result: ServerAPIExtension) -> [String] {
        let answer = result.answer
        guard answer.success == true else { return ["\(originalTransactionID): Apple did not extend it (\(name(result.environment)))"] }
        return [
            "\(originalTransactionID) extended (\(name(result.environment))): renews \(answer.effectiveDate.map(date) ?? "?")"
        ]
    }

    // MARK: JSON

    static func json(_ answer: ServerAPITransactions) -> [String: Any] {
        var object: [String: Any] = [
            "environment": name(answer.environment), "transactions": answer.signedTransactions.map(payload),
        ]
        if let revision = answer.revision { object["revision"] = revision }
        return object
    }

    static func json(_ answer: ServerAPISubscriptionStatuses) -> [String: Any] {
        [
            "environment": name(answer.environment),
            "subscriptions": answer.subscriptions.map { subscription -> [String: Any] in
                var object: [String: Any] = [
                    "subscriptionGroupIdentifier": subscription.subscriptionGroupIdentifier,
                    "status": Int(subscription.status), "originalTransactionId": subscription.originalTransactionID,
                    "transaction": payload(subscription.signedTransaction),
                ]
                if let renewal = subscription.signedRenewalInfo { object["renewalInfo"] = payload(renewal) }
                return object
            },
        ]
    }

    static func json(_ notification: ServerAPINotification) -> [String: Any] {
        [
            "notification": payload(notification.signedPayload),
            "sendAttempts": notification.sendAttempts.map { attempt -> [String: Any] in
                ["attemptDate": attempt.attemptDate ?? 0, "sendAttemptResult": attempt.sendAttemptResult ?? ""]
            },
        ]
    }

    static func text(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The payload of a JWS the client verified already, as JSON; nested JWS are decoded too.
    static func payload(_ jws: String) -> Any {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]),
            var object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return NSNull() }
        if var data = object["data"] as? [String: Any] {
            for key in ["signedTransactionInfo", "signedRenewalInfo"] {
                if let nested = data[key] as? String { data[key] = payload(nested) }
            }
            object["data"] = data
        }
        return object
    }

    // MARK: Pieces

    private static func line(_ transaction: Transaction) -> String {
        var line = "\(transaction.transactionID)  \(transaction.productID)  bought \(date(transaction.purchaseDateMs))"
        if transaction.hasExpiresDateMs { line += "  until \(date(transaction.expiresDateMs))" }
        if transaction.hasCancellationDateMs { line += "  REFUNDED \(date(transaction.cancellationDateMs))" }
        if transaction.originalTransactionID != transaction.transactionID {
            line += "  original \(transaction.originalTransactionID)"
        }
        return line
    }

    private static func status(_ value: Int32) -> String {
        switch value {
        case 1: "active"
        case 2: "expired"
        case 3: "billing_retry"
        case 4: "grace"
        case 5: "revoked"
        default: "status \(value)"
        }
    }

    private static func name(_ environment: AppleEnvironment) -> String {
        environment == .sandbox ? "Sandbox" : "Production"
    }

    private static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }

    private static func date(_ milliseconds: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1_000))
    }
}
