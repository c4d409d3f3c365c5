import Contracts

/// What every rule works with inside one unit of a group commit.
struct RuleContext {
    let session: any LedgerSession
    let origin: EventOrigin
    var now: Int64 { origin.occurredAtMs }

    init(session: any LedgerSession, requestID: String, now: Int64) {
        self.session = session
        self.origin = EventOrigin(requestID: requestID, occurredAtMs: now)
    }

    @discardableResult
    func emit(_ event: LedgerEvent) throws -> LedgerEvent { try session.append(event) }
}
