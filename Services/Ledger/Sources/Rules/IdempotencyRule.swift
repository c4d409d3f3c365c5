import Contracts

/// Idempotency-Key (spec v1.1): the first complete answer for (API key, key)
/// is kept in the same savepoint as the change it reports, so it exists
/// exactly when the change does. For 24 hours the same key with the same body
/// gets that answer again, unchanged; with another body it is refused.
enum IdempotencyRule {
    static let retentionMs: Int64 = 24 * 60 * 60 * 1_000

    /// The answer kept for `key` and still valid at `now`; nil when there is none.
    static func kept(_ key: IdempotencyKey, now: Int64, reader: any LedgerReader) throws -> RecordOutcome? {
        try validate(key)
        guard let stored = try reader.idempotentAnswer(scope: key.scope, key: key.key),
            stored.createdAtMs > now - retentionMs
        else { return nil }
        guard stored.requestSHA256 == key.requestSha256 else { throw LedgerFailure.idempotencyKeyReused }
        var outcome = try RecordOutcome(serializedBytes: stored.outcome)
        outcome.replayed = true
        return outcome
    }

    /// Records `request`, or answers what was kept for its key.
    static func record(_ request: RecordRequest, _ rule: RecordRule, _ context: RuleContext) throws -> RecordOutcome {
        guard request.hasIdempotency else { return try rule.record(request, context) }
        let key = request.idempotency
        if let kept = try kept(key, now: context.now, reader: context.session) { return kept }
        var outcome = try rule.record(request, context)
        outcome.answerContext = request.answerContext
        try context.session.storeIdempotentAnswer(
            StoredIdempotentAnswer(
                scope: key.scope, key: key.key, requestSHA256: key.requestSha256, outcome: try outcome.serializedBytes(),
                createdAtMs: context.now))
        return outcome
    }

    /// Spec: 1-255 printable ASCII characters; the gateway always sends the body's digest.
    static func validate(_ key: IdempotencyKey) throws(LedgerFailure) {
        guard (1...255).contains(key.key.utf8.count), key.key.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw .badRequest("Idempotency-Key must be 1-255 printable ASCII characters")
        }
        guard key.requestSha256.utf8.count == 64 else { throw .badRequest("the idempotent request's digest is missing") }
    }
}
