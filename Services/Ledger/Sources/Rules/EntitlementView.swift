import Contracts

/// What every answer shows of a user: the entitlements of every kind, and,
/// with a catalog, the access names active now.
public struct EntitlementView: Sendable {
    public let catalog: ProductCatalog?
    /// The catalog's non-consumable and non-renewing products.
    let listedProducts: [String]

    public init(catalog: ProductCatalog?) {
        self.catalog = catalog
        listedProducts = (catalog?.products ?? [:]).filter { $0.value.kind == .nonConsumable || $0.value.kind == .nonRenewing }
            .keys.sorted()
    }

    public struct Shown: Sendable {
        public var entitlements: [Entitlement]
        /// nil without a catalog.
        public var access: [Access]?
    }

    public func shown(_ user: String, at now: Int64, reader: any LedgerReader) throws -> Shown {
        var entitlements = try reader.subscriptions(ownedBy: user).map { EntitlementCalculator.entitlement($0, at: now, catalog: catalog) }
        let purchases = Dictionary(
            grouping: try reader.oneOffPurchases(ownedBy: user, listedProducts: listedProducts), by: \.subscriptionKey)
        entitlements += purchases.values.compactMap { EntitlementCalculator.entitlement($0, catalog: catalog, at: now) }
        entitlements.sort { ($0.originalTransactionID, $0.environment.rawValue) < ($1.originalTransactionID, $1.environment.rawValue) }
        return Shown(entitlements: entitlements, access: catalog.map { access(of: entitlements, in: $0) })
    }

    /// Into a record's outcome, as of the record.
    func fill(_ outcome: inout RecordOutcome, user: String, at now: Int64, reader: any LedgerReader) throws {
        let shown = try shown(user, at: now, reader: reader)
        outcome.entitlements = shown.entitlements
        if let access = shown.access {
            outcome.access = access
            outcome.accessListed = true
        }
    }

    /// Each access name an active entitlement unlocks, with the purchase that
    /// grants it longest (no expiry, a non-consumable, beats any expiry).
    private func access(of entitlements: [Entitlement], in catalog: ProductCatalog) -> [Access] {
        var granted: [String: Access] = [:]
        for entitlement in entitlements where entitlement.active {
            for name in catalog[entitlement.productID]?.access ?? [] {
                let candidate = Access.with {
                    $0.name = name
                    $0.active = true
                    $0.productID = entitlement.productID
                    if entitlement.hasExpiresDateMs { $0.expiresDateMs = entitlement.expiresDateMs }
                }
                if let held = granted[name], !Self.lasts(candidate, longerThan: held) { continue }
                granted[name] = candidate
            }
        }
        return granted.values.sorted { $0.name < $1.name }
    }

    private static func lasts(_ a: Access, longerThan b: Access) -> Bool {
        guard b.hasExpiresDateMs else { return false }
        return !a.hasExpiresDateMs || a.expiresDateMs > b.expiresDateMs
    }
}
