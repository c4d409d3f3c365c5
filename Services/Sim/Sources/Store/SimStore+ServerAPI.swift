import Contracts

/// What the Server API's calls look up in the store.
extension SimStore {
    /// The transaction, if `environment` has it (Apple's environments know only their own).
    func transaction(_ id: String, in environment: AppleEnvironment) -> SimTransaction? {
        transactions[id].flatMap { $0.environment == environment ? $0 : nil }
    }

    /// The transaction of an order id, if `environment` has it.
    func order(_ orderID: String, in environment: AppleEnvironment) -> SimTransaction? {
        orders[orderID].flatMap { transaction($0, in: environment) }
    }
}
