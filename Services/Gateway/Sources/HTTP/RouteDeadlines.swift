/// How long the gateway waits for the ledger on the routes that do not verify
/// (a receipt's or a signed transaction's deadline is `ReceiptOrchestrator`'s).
enum RouteDeadlines {
    /// Entitlements and transactions: reads of a snapshot.
    static let read: Duration = .seconds(5)
    /// A notification: one write, after the verifier pool for version 2.
    static let notification: Duration = .seconds(10)
}
