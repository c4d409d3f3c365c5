import ArgumentParser

/// `storekeeper sim upgrade|downgrade|crossgrade ORIGINAL_TRANSACTION_ID PRODUCT`:
/// a customer's plan change in the simulator, applied as the App Store does
/// (an upgrade, or a crossgrade to the same period, at once; a downgrade, or
/// a crossgrade to another period, at the next renewal; naming the current
/// product again cancels a queued change) and notified as Apple notifies it.
struct SimPlanChangeArguments: ParsableArguments {
    @OptionGroup var target: SimCommand.Target
    @Argument(help: "The subscription's original transaction id.") var originalTransactionID: String
    @Argument(help: "The product to change to (the current one again cancels a queued change).") var product: String
    @Option(help: "The new product's period: P1W, P1M, P2M, P3M, P6M, P1Y (default: the current one).") var period: String?
    @Option(help: "The new product's level in the group, 1 the highest (checked against the kind when both are known).")
    var level: Int?

    func run(_ kind: String) async throws {
        var body: [String: Any] = ["original_transaction_id": originalTransactionID, "product_id": product, "kind": kind]
        if let period { body["period"] = period }
        if let level { body["level"] = level }
        print(try await target.client.post("admin/plan-changes", body))
    }
}

extension SimCommand {
    struct Upgrade: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upgrade a subscription: the new product starts now (DID_CHANGE_RENEWAL_PREF / UPGRADE).")
        @OptionGroup var change: SimPlanChangeArguments
        func run() async throws { try await change.run("upgrade") }
    }

    struct Downgrade: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Downgrade a subscription at its next renewal (DID_CHANGE_RENEWAL_PREF / DOWNGRADE).")
        @OptionGroup var change: SimPlanChangeArguments
        func run() async throws { try await change.run("downgrade") }
    }

    struct Crossgrade: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Crossgrade a subscription: at once to the same period, at the next renewal to another.")
        @OptionGroup var change: SimPlanChangeArguments
        func run() async throws { try await change.run("crossgrade") }
    }
}
