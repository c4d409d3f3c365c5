import Contracts
import Foundation

/// `STOREKEEPER_CATALOG`: each product's kind, a non-renewing subscription's
/// duration, and the access names a product unlocks. Verified data says
/// neither a one-off purchase's kind (verifyReceipt) nor a non-renewing
/// subscription's length (anywhere): the developer's catalog does.
public struct ProductCatalog: Equatable, Sendable {
    public struct Product: Equatable, Sendable {
        public var kind: ProductKind
        /// Non-renewing subscriptions only: how long one purchase lasts.
        public var duration: ISODuration?
        /// Access names it unlocks (`entitlements: [pro]`).
        public var access: [String]

        public init(kind: ProductKind, duration: ISODuration? = nil, access: [String] = []) {
            self.kind = kind
            self.duration = duration
            self.access = access
        }
    }

    public var products: [String: Product]

    public init(products: [String: Product] = [:]) {
        self.products = products
    }

    public subscript(productID: String) -> Product? { products[productID] }

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
