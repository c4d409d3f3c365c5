extension Envelope {
    /// The record's deadline of a receipt a verifier may hand to a ledger
    /// (`LedgerHandoff`), which answers later than the verifier would: nil
    /// for any other envelope.
    public var handoffRecordDeadlineMs: Int64? {
        guard case .verifyRequest(let request) = body, request.hasLedgerHandoff else { return nil }
        return request.ledgerHandoff.recordDeadlineMs
    }
}
