import ArgumentParser
import Foundation
import Verifier

/// `storekeeper apple ...`: the App Store Server API, as the verifiers call it.
struct AppleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple",
        abstract: "Ask the App Store Server API (or with --sim the simulator's): history, status, orders, test notifications, extensions.",
        subcommands: [History.self, Status.self, TestNotification.self, Extend.self, Lookup.self])

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every transaction of the customer (Get Transaction History v2, every page).")
        @OptionGroup var target: AppleAPITarget
        @Argument(help: "Any transaction id of the customer, e.g. the original one.") var originalTransactionID: String
        @Option(help: "Only what changed after this revision (printed by an earlier call).") var since: String?

        func run() async throws {
            let answer = try await ServerAPIFailure.reporting {
                try await target.withClient { try await $0.transactionHistory(originalTransactionID, since: since) }
            }
            print(target.json ? ServerAPIText.text(ServerAPIText.json(answer)) : ServerAPIText.transactions("history", answer).joined(separator: "\n"))
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The customer's subscriptions now (Get All Subscription Statuses).")
        @OptionGroup var target: AppleAPITarget
        @Argument(help: "Any transaction id of the customer, e.g. the original one.") var originalTransactionID: String

        func run() async throws {
            let answer = try await ServerAPIFailure.reporting {
                try await target.withClient { try await $0.subscriptionStatuses(originalTransactionID) }
            }
            print(target.json ? ServerAPIText.text(ServerAPIText.json(answer)) : ServerAPIText.statuses(answer).joined(separator: "\n"))
        }
    }

    struct TestNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test-notification",
            abstract: "Have Apple send a TEST notification to the app's notification URL, and show how it went.")
        @OptionGroup var target: AppleAPITarget
        @Option(help: "production or sandbox.") var environment: AppleEnvironmentOption = .production
        @Option(help: "How long to wait for Apple to report the delivery (seconds).") var wait = 10

        func run() async throws {
            let (token, notification) = try await ServerAPIFailure.reporting {
                try await target.withClient { client in
                    let token = try await client.requestTestNotification(environment: environment.value)
                    return (token, try await Self.status(token, client, environment: environment, wait: .seconds(wait)))
                }
            }
            if target.json {
                var object = ServerAPIText.json(notification)
                object["testNotificationToken"] = token
                print(ServerAPIText.text(object))
            } else {
                print(ServerAPIText.notification(token, notification).joined(separator: "\n"))
            }
        }

        /// Apple answers 4040008 until it has sent the notification: asked again each second until `wait` passed.
        private static func status(
            _ token: String, _ client: AppStoreServerClient, environment: AppleEnvironmentOption, wait: Duration
        ) async throws -> ServerAPINotification {
            let deadline = ContinuousClock.now + wait
            while true {
                do {
                    return try await client.testNotificationStatus(token, environment: environment.value)
                } catch {
                    guard error.isNotFound, ContinuousClock.now + .seconds(1) < deadline else { throw error }
                }
                try await Task.sleep(for: .seconds(1))
            }
        }
    }

    struct Extend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move a subscription's renewal date later (Extend a Subscription Renewal Date).")
        @OptionGroup var target: AppleAPITarget
        @Argument(help: "The subscription's original transaction id.") var originalTransactionID: String
        @Option(help: "How many days (1-90).") var days: Int32
        @Option(help: "0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.") var reason: Int32 = 0
        @Option(help: "This extension's id (the same id again extends nothing more; default: a new UUID).")
        var requestID: String?

        func validate() throws {
            guard (1...90).contains(days) else { throw ValidationError("--days must be between 1 and 90") }
            guard (0...3).contains(reason) else { throw ValidationError("--reason must be between 0 and 3") }
        }

        func run() async throws {
            let identifier = requestID ?? UUID().uuidString
            let answer = try await ServerAPIFailure.reporting {
                try await target.withClient { client in
                    try await client.extendRenewalDate(
                        originalTransactionID, byDays: days, reason: reason, requestIdentifier: identifier)
                }
            }
            if target.json {
                let object: [String: Any] = [
                    "environment": answer.environment == .sandbox ? "Sandbox" : "Production",
                    "originalTransactionId": answer.answer.originalTransactionId ?? "", "success": answer.answer.success ?? false,
                    "effectiveDate": answer.answer.effectiveDate ?? 0, "requestIdentifier": identifier,
                ]
                print(ServerAPIText.text(object))
            } else {
                print(ServerAPIText.extended(originalTransactionID, answer).joined(separator: "\n"))
            }
        }
    }

    struct Lookup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The transactions of an order id from a customer's invoice (Look Up Order ID).")
        @OptionGroup var target: AppleAPITarget
        @Argument(help: "The order id.") var orderID: String
        @Option(help: "production or sandbox.") var environment: AppleEnvironmentOption = .production

        func run() async throws {
            let answer = try await ServerAPIFailure.reporting {
                try await target.withClient { try await $0.lookUpOrder(orderID, environment: environment.value) }
            }
            if target.json {
                var object = ServerAPIText.json(answer.transactions)
                object["valid"] = answer.isValid
                print(ServerAPIText.text(object))
            } else {
                print(ServerAPIText.order(orderID, answer).joined(separator: "\n"))
            }
        }
    }
}
