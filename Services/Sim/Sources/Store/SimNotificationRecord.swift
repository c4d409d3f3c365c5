import AppleFormats
import Contracts
import Foundation

/// A notification the simulator sent (or would have, with no URL configured),
/// kept for the Server API's notification history and test-notification
/// status: what it said at the time it was made (its claims, signed when
/// asked for), and how its deliveries went.
struct SimNotificationRecord: Sendable {
    let uuid: String
    let type: String
    let subtype: String?
    let environment: AppleEnvironment
    /// The simulator's clock when it was made.
    let signedDateMs: Int64
    /// The customer (Apple account) it is about: the history's `transactionId`
    /// filter names any transaction of a customer and keeps that customer's.
    let account: String?
    let transactionClaims: Data?
    let renewalClaims: Data?
    /// For a TEST notification: the token its status is asked with.
    let testToken: String?
    var sendAttempts: [SendAttemptItem] = []

    /// How many the simulator keeps (the oldest go first): Apple keeps 180 days, a simulator run far less.
    static let retained = 10_000

    /// A delivery that was answered 2xx.
    var delivered: Bool { sendAttempts.contains { $0.sendAttemptResult == "SUCCESS" } }
}
