/// The topics of the ledger's event stream (spec: Ledger events). The PUB
/// socket sends the topic as the first frame, so a subscriber can filter by prefix.
public enum EventTopic: String, CaseIterable, Sendable {
    case transactionGranted = "transaction.granted"
    case transactionRevoked = "transaction.revoked"
    case subscriptionRenewed = "subscription.renewed"
    /// Auto-renew, grace, billing retry, price consent or product changed.
    case subscriptionChanged = "subscription.changed"
    case subscriptionExpired = "subscription.expired"
    case bindingTransferred = "binding.transferred"
}
