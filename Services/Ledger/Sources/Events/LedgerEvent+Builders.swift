import Contracts

/// Who and what caused a change: copied into every event it writes.
struct EventOrigin {
    var requestID: String
    var occurredAtMs: Int64
}

extension LedgerEvent {
    private init(_ topic: EventTopic, _ origin: EventOrigin, user: String?, environment: AppleEnvironment) {
        self.init()
        self.topic = topic.rawValue
        self.occurredAtMs = origin.occurredAtMs
        self.requestID = origin.requestID
        self.userID = user ?? ""
        self.environment = environment
    }

    static func granted(_ transaction: StoredTransaction, to user: String, _ origin: EventOrigin) -> LedgerEvent {
        var event = LedgerEvent(.transactionGranted, origin, user: user, environment: transaction.key.environment)
        event.transactionGranted = TransactionGranted.with { $0.grant = transaction.grant }
        return event
    }

    static func revoked(_ transaction: StoredTransaction, _ origin: EventOrigin) -> LedgerEvent {
        var event = LedgerEvent(
            .transactionRevoked, origin, user: transaction.grantedTo, environment: transaction.key.environment)
        event.transactionRevoked = TransactionRevoked.with {
            $0.transactionID = transaction.key.transactionID
            $0.originalTransactionID = transaction.originalTransactionID
            $0.productID = transaction.productID
            $0.cancellationDateMs = transaction.cancellationDateMs ?? origin.occurredAtMs
            if let reason = transaction.cancellationReason { $0.cancellationReason = reason }
        }
        return event
    }

    static func renewed(
        _ subscription: SubscriptionRecord, previousExpiry: Int64, owner: String?, _ origin: EventOrigin
    ) -> LedgerEvent {
        var event = LedgerEvent(.subscriptionRenewed, origin, user: owner, environment: subscription.key.environment)
        event.subscriptionRenewed = SubscriptionRenewed.with {
            $0.originalTransactionID = subscription.key.originalTransactionID
            $0.productID = subscription.productID
            $0.previousExpiresDateMs = previousExpiry
            $0.expiresDateMs = subscription.expiresDateMs ?? 0
        }
        return event
    }

    static func changed(
        _ subscription: SubscriptionRecord, aspects: [String], plan: PlanChange? = nil, owner: String?,
        catalog: ProductCatalog? = nil, _ origin: EventOrigin
    ) -> LedgerEvent {
        var event = LedgerEvent(.subscriptionChanged, origin, user: owner, environment: subscription.key.environment)
        event.subscriptionChanged = SubscriptionChanged.with {
            $0.originalTransactionID = subscription.key.originalTransactionID
            $0.entitlement = EntitlementCalculator.entitlement(subscription, at: origin.occurredAtMs, catalog: catalog)
            $0.changed = aspects
            if let plan {
                $0.change = plan.kind.rawValue
                $0.fromProductID = plan.from
                $0.toProductID = plan.to
                $0.effectiveDateMs = plan.effectiveMs
            }
        }
        return event
    }

    static func expired(_ subscription: SubscriptionRecord, owner: String?, _ origin: EventOrigin) -> LedgerEvent {
        var event = LedgerEvent(.subscriptionExpired, origin, user: owner, environment: subscription.key.environment)
        event.subscriptionExpired = SubscriptionExpired.with {
            $0.originalTransactionID = subscription.key.originalTransactionID
            $0.productID = subscription.productID
            $0.expiresDateMs = subscription.expiresDateMs ?? 0
            if let intent = subscription.expirationIntent { $0.expirationIntent = intent }
        }
        return event
    }

    static func transferred(
        _ subscription: SubscriptionKey, from previous: String, to user: String, _ origin: EventOrigin
    ) -> LedgerEvent {
        var event = LedgerEvent(.bindingTransferred, origin, user: user, environment: subscription.environment)
        event.bindingTransferred = BindingTransferred.with {
            $0.originalTransactionID = subscription.originalTransactionID
            $0.fromUserID = previous
            $0.toUserID = user
        }
        return event
    }
}
