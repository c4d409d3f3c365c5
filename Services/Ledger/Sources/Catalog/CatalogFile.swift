import Contracts
import Foundation
import StorekeeperCore
import Yams

/// Reads `STOREKEEPER_CATALOG` (YAML, or the same structure in JSON, which is
/// YAML too). Every mistake is a configuration error naming the variable, the
/// file and the line at fault, so the ledger stops at start-up (exit 78)
/// instead of answering wrong entitlements.
///
/// ```yaml
/// products:
///   com.example.pro.monthly: {type: auto_renewable, entitlements: [pro]}
///   com.example.premium.yearly: {type: auto_renewable, group: pro, level: 1, duration: P1Y, entitlements: [pro, hd]}
///   com.example.season.pass: {type: non_renewing, duration: P3M, entitlements: [season]}
/// ```
public enum CatalogFile {
    public static func load(path: String) throws(ConfigurationError) -> ProductCatalog {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw failure(path, line: nil, "cannot be read")
        }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws(ConfigurationError) -> ProductCatalog {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw failure(path, line: line(of: error), "is not valid YAML or JSON")
        } catch {
            throw failure(path, line: nil, "is not valid YAML or JSON")
        }
        guard let root, let top = root.mapping else { throw failure(path, line: root?.mark?.line, "must be a mapping with 'products'") }
        var catalog = ProductCatalog()
        for (key, value) in top {
            guard key.string == "products" else { throw failure(path, line: key.mark?.line, "unknown key '\(key.string ?? "?")'") }
            guard let products = value.mapping else { throw failure(path, line: value.mark?.line, "'products' must map product ids to products") }
            for (id, product) in products {
                guard let productID = id.string, !productID.isEmpty else { throw failure(path, line: id.mark?.line, "a product id must be a string") }
                catalog.products[productID] = try self.product(product, id: productID, path: path)
            }
        }
        return catalog
    }

    private static func product(_ node: Node, id: String, path: String) throws(ConfigurationError) -> ProductCatalog.Product {
        guard let fields = node.mapping else { throw failure(path, line: node.mark?.line, "product \(id) must be a mapping") }
        var kind: ProductKind?
        var duration: ISODuration?
        var access: [String] = []
        var group: String?
        var level: Int?
        for (key, value) in fields {
            let line = value.mark?.line ?? key.mark?.line
            switch key.string {
            case "type":
                guard let name = value.string, let known = ProductCatalog.kind(named: name) else {
                    throw failure(path, line: line, "product \(id): type must be auto_renewable, non_renewing, non_consumable or consumable")
                }
                kind = known
            case "duration":
                guard let text = value.string, let parsed = ISODuration(text) else {
                    throw failure(path, line: line, "product \(id): duration must be an ISO 8601 duration such as P1M")
                }
                duration = parsed
            case "entitlements":
                guard let names = value.sequence?.map({ $0.string ?? "" }), !names.contains(where: \.isEmpty) else {
                    throw failure(path, line: line, "product \(id): entitlements must be a list of names")
                }
                access = names
            case "group":
                guard let name = value.string, !name.isEmpty else {
                    throw failure(path, line: line, "product \(id): group must be a name")
                }
                group = name
            case "level":
                guard let text = value.string, let number = Int(text), number >= 1 else {
                    throw failure(path, line: line, "product \(id): level must be a whole number from 1 (the highest)")
                }
                level = number
            default:
                throw failure(path, line: key.mark?.line, "product \(id): unknown key '\(key.string ?? "?")'")
            }
        }
        guard let kind else { throw failure(path, line: node.mark?.line, "product \(id): type is required") }
        if kind == .nonRenewing, duration == nil {
            throw failure(path, line: node.mark?.line, "product \(id): a non_renewing product needs a duration")
        }
        if kind != .nonRenewing, kind != .autoRenewable, duration != nil {
            throw failure(path, line: node.mark?.line, "product \(id): only a subscription has a duration")
        }
        if kind != .autoRenewable, group != nil || level != nil {
            throw failure(path, line: node.mark?.line, "product \(id): only an auto_renewable product has a group and a level")
        }
        if kind == .consumable, !access.isEmpty {
            throw failure(path, line: node.mark?.line, "product \(id): a consumable unlocks no entitlements")
        }
        return ProductCatalog.Product(kind: kind, duration: duration, access: access, group: group, level: level)
    }

    private static func line(of error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): mark.line
        default: nil
        }
    }

    private static func failure(_ path: String, line: Int?, _ reason: String) -> ConfigurationError {
        ConfigurationError(
            variable: ConfigurationVariable.catalog.rawValue,
            reason: "\(path)\(line.map { ":\($0)" } ?? ""): \(reason)")
    }
}
