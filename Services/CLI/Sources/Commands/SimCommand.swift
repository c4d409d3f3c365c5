import ArgumentParser
import Foundation
import StorekeeperCore

/// `storekeeper sim ...`: drives the local App Store simulator's admin API.
struct SimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sim",
        abstract: "Buy, renew, cancel, refund and change plans in storekeeper-sim; move its clock; inject faults.",
        subcommands: [
            Purchase.self, Renew.self, Cancel.self, Refund.self, AutoRenew.self, Upgrade.self, Downgrade.self, Crossgrade.self,
            Clock.self, Faults.self, APIFaults.self, NotificationFaults.self, RefundRequest.self, Consumption.self,
        ])

    struct Target: ParsableArguments {
        @Option(help: "The simulator's base URL (default: http://STOREKEEPER_SIM_ADDR).")
        var simURL: String?

        var client: SimAdminClient {
            get throws {
                let address = simURL ?? "http://" + EnvironmentReader().string(.simulatorAddress)
                guard let url = URL(string: address) else { throw ValidationError("--sim-url is not a URL") }
                return SimAdminClient(base: url)
            }
        }
    }

    struct Purchase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "An Apple account buys a product; prints its receipt and ids.", aliases: ["buy"])
        @OptionGroup var target: Target
        @Option(help: "Product identifier.") var product: String
        @Option(help: "consumable, non_consumable, non_renewing or auto_renewable.") var type = "auto_renewable"
        @Option(help: "production or sandbox.") var environment = "sandbox"
        @Option(help: "The buyer's Apple account (receipts hold every purchase of it).") var account = "apple-account-1"
        @Option(help: "Subscription period: P1W, P1M, P2M, P3M, P6M, P1Y.") var period = "P1M"
        @Option(help: "Auto-renewable: the product's level in its group, 1 the highest (optional).") var level: Int?
        @Option(help: "Also write the receipt (base64) to this file, for `storekeeper verify`.") var receiptFile: String?
        @Flag(help: "Print the simulator's JSON answer as is.") var json = false

        func run() async throws {
            var body: [String: Any] = [
                "product_id": product, "type": type, "environment": environment, "account": account, "period": period,
            ]
            if let level { body["level"] = level }
            let answer = try await target.client.post("admin/purchases", body)
            let object = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any] ?? [:]
            if let receiptFile, let receipt = object["receipt_data"] as? String {
                try Data(receipt.utf8).write(to: URL(fileURLWithPath: receiptFile))
            }
            guard !json else { return print(answer) }
            print("bought \(product) (\(environment)): transaction \(object["transaction_id"] as? String ?? "?"), original \(object["original_transaction_id"] as? String ?? "?")")
            if let expires = object["expires_date_ms"] as? String { print("expires_date_ms \(expires)") }
            if let order = object["order_id"] as? String { print("order \(order) (for `storekeeper apple lookup`)") }
            print(receiptFile.map { "receipt written to \($0)" } ?? "receipt: \(object["receipt_data"] as? String ?? "")")
        }
    }

    struct Renew: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the clock to the end of a subscription's period: it renews now (DID_RENEW is sent).")
        @OptionGroup var target: Target
        @Argument(help: "The subscription's original transaction id.") var originalTransactionID: String

        func run() async throws {
            print(try await target.client.post("admin/renew", ["original_transaction_id": originalTransactionID]))
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The customer turns auto-renew off: the subscription ends with its period (DID_CHANGE_RENEWAL_STATUS).")
        @OptionGroup var target: Target
        @Argument(help: "The subscription's original transaction id.") var originalTransactionID: String

        func run() async throws {
            print(try await target.client.post(
                "admin/auto-renew", ["original_transaction_id": originalTransactionID, "enabled": false]))
        }
    }

    struct Refund: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refund a transaction (sets cancellation_date).")
        @OptionGroup var target: Target
        @Argument(help: "The transaction id.") var transactionID: String
        @Option(help: "Apple's cancellation_reason: 0 other, 1 an issue in the app.") var reason = 0

        func run() async throws {
            print(try await target.client.post("admin/refunds", ["transaction_id": transactionID, "reason": reason]))
        }
    }

    struct AutoRenew: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "auto-renew", abstract: "Turn a subscription's auto-renew on or off.")
        @OptionGroup var target: Target
        @Argument(help: "The subscription's original transaction id.") var originalTransactionID: String
        @Flag(inversion: .prefixedEnableDisable, help: "Renew automatically.") var renew = true

        func run() async throws {
            print(try await target.client.post(
                "admin/auto-renew", ["original_transaction_id": originalTransactionID, "enabled": renew]))
        }
    }

    struct Clock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move the simulator's clock forward (renewals fall due).")
        @OptionGroup var target: Target
        @Option(help: "How far, in minutes.") var minutes: Int

        func validate() throws {
            guard minutes >= 0 else { throw ValidationError("--minutes must not be negative") }
        }

        func run() async throws {
            print(try await target.client.post("admin/clock", ["advance_ms": minutes * 60_000]))
        }
    }

    struct Faults: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set one environment's faults (all zero: none).")
        @OptionGroup var target: Target
        @Argument(help: "production or sandbox.") var environment: String
        @Option(help: "Added latency, lower bound (ms).") var latencyMin = 0
        @Option(help: "Added latency, upper bound (ms).") var latencyMax: Int?
        @Option(name: .customLong("rate-21005"), help: "Fraction of calls answered 21005.") var rate21005 = 0.0
        @Option(name: .customLong("rate-21199"), help: "Fraction of calls answered 21199 (retryable).") var rate21199 = 0.0
        @Option(name: .customLong("rate-503"), help: "Fraction of calls answered HTTP 503.") var rate503 = 0.0
        @Option(help: "Fraction of calls never answered.") var rateHang = 0.0
        @Option(help: "Fraction of calls answered with an HTML page.") var rateGarbage = 0.0
        @Option(help: "Fraction of calls answered with half a JSON answer.") var rateTruncated = 0.0
        @Option(help: "Fraction of calls answered with 50 MiB.") var rateHuge = 0.0
        @Option(help: "Fraction of calls answered for another app's bundle.") var rateWrongBundle = 0.0

        func run() async throws {
            print(try await target.client.post(
                "admin/faults/\(environment)",
                [
                    "latency_min_ms": latencyMin, "latency_max_ms": latencyMax ?? latencyMin, "rate_21005": rate21005,
                    "rate_21199": rate21199, "rate_503": rate503, "rate_hang": rateHang, "rate_garbage": rateGarbage,
                    "rate_truncated": rateTruncated, "rate_huge": rateHuge, "rate_wrong_bundle": rateWrongBundle,
                ]))
        }
    }

    struct APIFaults: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "api-faults",
            abstract: "Set one environment's App Store Server API faults: the next calls' in order, then one for every call.")
        @OptionGroup var target: Target
        @Argument(help: "production or sandbox.") var environment: String
        @Option(parsing: .upToNextOption, help: "Faults of the next calls, in order: 429, 401, 500, 503 or hang.")
        var next: [String] = []
        @Option(help: "The fault of every later call (none when left out).") var always: String?
        @Option(help: "The Retry-After of a 429 (seconds).") var retryAfter = 1

        func run() async throws {
            var plan: [String: Any] = ["next": next, "retry_after_seconds": retryAfter]
            if let always { plan["always"] = always }
            print(try await target.client.post("admin/server-api/faults/\(environment)", plan))
        }
    }
}
