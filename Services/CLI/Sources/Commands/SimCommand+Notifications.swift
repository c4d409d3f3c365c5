import ArgumentParser

/// `storekeeper sim` commands about notifications and refund requests.
extension SimCommand {
    struct NotificationFaults: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "notification-faults",
            abstract: "Lose every notification on its way to the gateway (still kept in the notification history), or stop.")
        @OptionGroup var target: Target
        @Flag(inversion: .prefixedNo, help: "Drop deliveries.") var drop: Bool

        func run() async throws {
            print(try await target.client.post("admin/notifications/faults", ["drop": drop]))
        }
    }

    struct RefundRequest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "refund-request",
            abstract: "The customer asks for a refund: a CONSUMPTION_REQUEST notification about the transaction.")
        @OptionGroup var target: Target
        @Argument(help: "The transaction id.") var transactionID: String

        func run() async throws {
            print(try await target.client.post("admin/consumption-requests", ["transaction_id": transactionID]))
        }
    }

    struct Consumption: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What the app sent about a transaction with Send Consumption Information (Apple's JSON).")
        @OptionGroup var target: Target
        @Argument(help: "The transaction id.") var transactionID: String

        func run() async throws {
            print(try await target.client.get("admin/consumption/\(transactionID)"))
        }
    }
}
