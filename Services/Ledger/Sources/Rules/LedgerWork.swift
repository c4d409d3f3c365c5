import Contracts
import StorekeeperCore

/// One unit of work for the ledger's writer; each runs in its own savepoint
/// inside a group commit.
public enum LedgerWork: Sendable {
    case record(RecordRequest)
    case notification(NotificationApply)
    /// `withoutReceipt`: the App Store Server API is there, so subscriptions with no receipt are refreshable too.
    case claimRefreshes(limit: Int, withoutReceipt: Bool = false)
    case refreshResult(VerifyResult, owner: String?)
    /// Takes the environment's catch-up lease for `holder`, for `leaseMs`.
    case claimCatchUp(AppleEnvironment, holder: String, leaseMs: Int64)
    /// Moves the catch-up cursor to `appliedUntil` (when given) and gives the lease back.
    case releaseCatchUp(AppleEnvironment, holder: String, appliedUntil: Int64?)
    case claimConsumptions(limit: Int)
    /// The consumption information about this transaction was sent, or refused for good.
    case consumptionDone(TransactionKey)
    case sweepExpired(limit: Int)
    case pruneEvents(before: Int64)
    /// Drops idempotent answers kept since before the cutoff (ms).
    case pruneIdempotentAnswers(before: Int64)
}

public enum LedgerWorkOutput: Sendable {
    case recorded(RecordOutcome)
    case notified(NotificationOutcome)
    case claimed([OwnedSubscription])
    /// The catch-up span to start from; nil when another ledger is catching up.
    case catchUp(CatchUpClaim?)
    case consumptions([PendingConsumption])
    case count(Int)
    case done
}

/// Routes each unit of work to its rule.
public struct LedgerRules: Sendable {
    public let policy: BindingPolicy
    /// Entitlements of every kind, and access with a catalog.
    public let view: EntitlementView
    /// `STOREKEEPER_SEND_CONSUMPTION_INFO`: a CONSUMPTION_REQUEST queues consumption information.
    public let sendsConsumptionInfo: Bool

    public init(policy: BindingPolicy, catalog: ProductCatalog? = nil, sendsConsumptionInfo: Bool = false) {
        self.policy = policy
        self.view = EntitlementView(catalog: catalog)
        self.sendsConsumptionInfo = sendsConsumptionInfo
    }

    public func apply(
        _ work: LedgerWork, requestID: String, now: Int64, session: any LedgerSession
    ) throws -> LedgerWorkOutput {
        let context = RuleContext(session: session, requestID: requestID, now: now, catalog: view.catalog)
        switch work {
        case .record(let request):
            return .recorded(try IdempotencyRule.record(request, RecordRule(policy: policy, view: view), context))
        case .notification(let notification):
            return .notified(try NotificationRule(sendsConsumptionInfo: sendsConsumptionInfo).apply(notification, context))
        case .claimRefreshes(let limit, let withoutReceipt):
            return .claimed(try MaintenanceRules.claimRefreshes(limit: limit, withoutReceipt: withoutReceipt, context))
        case .refreshResult(let result, let owner):
            try MaintenanceRules.applyRefresh(result, owner: owner, context)
            return .done
        case .claimCatchUp(let environment, let holder, let leaseMs):
            return .catchUp(try CatchUpRules.claim(environment, holder: holder, leaseMs: leaseMs, context))
        case .releaseCatchUp(let environment, let holder, let appliedUntil):
            try CatchUpRules.release(environment, holder: holder, appliedUntil: appliedUntil, context)
            return .done
        case .claimConsumptions(let limit):
            return .consumptions(try ConsumptionRules.claim(limit: limit, context))
        case .consumptionDone(let key):
            try ConsumptionRules.done(key, context)
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
