import Contracts

/// What every rule works with inside one unit of a group commit.
struct RuleContext {
    let session: any LedgerSession
    let origin: EventOrigin
    /// `STOREKEEPER_CATALOG`, when configured: names plan changes between
    /// products of one level crossgrades, and the access a renewal will give.
    let catalog: ProductCatalog?
    var now: Int64 { origin.occurredAtMs }

    init(session: any LedgerSession, requestID: String, now: Int64, catalog: ProductCatalog? = nil) {
        self.session = session
        self.origin = EventOrigin(requestID: requestID, occurredAtMs: now)
        self.catalog = catalog
    }

    @discardableResult
    func emit(_ event: LedgerEvent) throws -> LedgerEvent { try session.append(event) }
}
