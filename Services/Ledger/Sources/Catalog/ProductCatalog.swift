import Contracts
import Foundation

/// `STOREKEEPER_CATALOG`: each product's kind, a non-renewing subscription's
/// duration, and the access names a product unlocks. Verified data says
/// neither a one-off purchase's kind (verifyReceipt) nor a non-renewing
/// subscription's length (anywhere): the developer's catalog does. For
/// auto-renewables it may also give the subscription group, the level in it
/// (1 the highest, as App Store Connect ranks them) and the period: Apple
/// never states levels, and only they tell a crossgrade from an upgrade.
public struct ProductCatalog: Equatable, Sendable {
    public struct Product: Equatable, Sendable {
        public var kind: ProductKind
        /// How long one purchase lasts (non-renewing), or one period (auto-renewable, optional).
        public var duration: ISODuration?
        /// Access names it unlocks (`entitlements: [pro]`).
        public var access: [String]
        /// Auto-renewable only: its subscription group, and its level in it (1 the highest).
        public var group: String?
        public var level: Int?

        public init(
            kind: ProductKind, duration: ISODuration? = nil, access: [String] = [], group: String? = nil, level: Int? = nil
        ) {
            self.kind = kind
            self.duration = duration
            self.access = access
            self.group = group
            self.level = level
        }
    }

    public var products: [String: Product]

    public init(products: [String: Product] = [:]) {
        self.products = products
    }

    public subscript(productID: String) -> Product? { products[productID] }

    /// Whether the catalog ranks both products at one level of one group: a
    /// change between them is a crossgrade. False when either level is unknown.
    public func sameLevel(_ a: String, _ b: String) -> Bool {
        guard let a = products[a], let b = products[b], let level = a.level, level == b.level else { return false }
        return a.group == b.group
    }

    /// The kind names of the catalog file and the API (`kind`).
    public static func kind(named name: String) -> ProductKind? {
        switch name {
        case "auto_renewable": .autoRenewable
        case "non_renewing": .nonRenewing
        case "non_consumable": .nonConsumable
        case "consumable": .consumable
        default: nil
        }
    }

    public static func name(of kind: ProductKind) -> String? {
        switch kind {
        case .autoRenewable: "auto_renewable"
        case .nonRenewing: "non_renewing"
        case .nonConsumable: "non_consumable"
        case .consumable: "consumable"
        default: nil
        }
    }
}
