import Contracts

/// The notification catch-up's cursor: one ledger at a time holds a lease on
/// an environment's cursor while it applies a span of Apple's history, then
/// moves the cursor past the span and lets go. A ledger that dies holding
/// the lease is relieved when the lease runs out.
enum CatchUpRules {
    /// The cursor to start from, with the lease taken for `holder`; nil when another ledger holds it.
    static func claim(
        _ environment: AppleEnvironment, holder: String, leaseMs: Int64, _ context: RuleContext
    ) throws -> CatchUpClaim? {
        try RequestValidation.validateEnvironment(environment)
        let stored = try context.session.catchUpCursor(environment)
        if let stored, let until = stored.leaseUntilMs, until > context.now, stored.leaseHolder != holder { return nil }
        var cursor = stored ?? CatchUpCursor(environment: environment, updatedAtMs: context.now)
        cursor.leaseHolder = holder
        cursor.leaseUntilMs = context.now + leaseMs
        cursor.updatedAtMs = context.now
        try context.session.saveCatchUpCursor(cursor)
        return CatchUpClaim(appliedUntilMs: stored?.appliedUntilMs)
    }

    /// Moves the cursor to `appliedUntil` (never back) and ends `holder`'s
    /// lease; a lease another ledger took since is left alone, the cursor still moves.
    static func release(
        _ environment: AppleEnvironment, holder: String, appliedUntil: Int64?, _ context: RuleContext
    ) throws {
        guard var cursor = try context.session.catchUpCursor(environment) else { return }
        if let appliedUntil, appliedUntil > cursor.appliedUntilMs ?? .min { cursor.appliedUntilMs = appliedUntil }
        if cursor.leaseHolder == holder {
            cursor.leaseHolder = nil
            cursor.leaseUntilMs = nil
        }
        cursor.updatedAtMs = context.now
        try context.session.saveCatchUpCursor(cursor)
    }
}
