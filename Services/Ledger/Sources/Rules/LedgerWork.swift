import Contracts
import StorekeeperCore

/// One unit of work for the ledger's writer; each runs in its own savepoint
/// inside a group commit.
public enum LedgerWork: Sendable {
    case record(RecordRequest)
    case notification(NotificationApply)
    case claimRefreshes(limit: Int)
    case refreshResult(VerifyResult, owner: String?)
    case sweepExpired(limit: Int)
    case pruneEvents(before: Int64)
    /// Drops idempotent answers kept since before the cutoff (ms).
    case pruneIdempotentAnswers(before: Int64)
}

public enum LedgerWorkOutput: Sendable {
    case recorded(RecordOutcome)
    case notified(NotificationOutcome)
    case claimed([OwnedSubscription])
    case count(Int)
    case done
}

/// Routes each unit of work to its rule.
public struct LedgerRules: Sendable {
    public let policy: BindingPolicy
    /// Entitlements of every kind, and access with a catalog.
    public let view: EntitlementView

    public init(policy: BindingPolicy, catalog: ProductCatalog? = nil) {
        self.policy = policy
        self.view = EntitlementView(catalog: catalog)
    }

    public func apply(
        _ work: LedgerWork, requestID: String, now: Int64, session: any LedgerSession
    ) throws -> LedgerWorkOutput {
        let context = RuleContext(session: session, requestID: requestID, now: now, catalog: view.catalog)
        switch work {
        case .record(let request):
            return .recorded(try IdempotencyRule.record(request, RecordRule(policy: policy, view: view), context))
        case .notification(let notification):
            return .notified(try NotificationRule().apply(notification, context))
        case .claimRefreshes(let limit):
            return .claimed(try MaintenanceRules.claimRefreshes(limit: limit, context))
        case .refreshResult(let result, let owner):
            try MaintenanceRules.applyRefresh(result, owner: owner, context)
            return .done
        case .sweepExpired(let limit):
            return .count(try MaintenanceRules.sweepExpired(limit: limit, context))
        case .pruneEvents(let cutoff):
            return .count(try session.pruneEvents(before: cutoff))
        case .pruneIdempotentAnswers(let cutoff):
            return .count(try session.pruneIdempotentAnswers(before: cutoff))
        }
    }

    /// A user's entitlements (and access) at `now`, from a read snapshot.
    public func entitlements(of user: String, at now: Int64, reader: any LedgerReader) throws -> EntitlementView.Shown {
        try view.shown(user, at: now, reader: reader)
    }
}
