/// The one place that maps Apple's spellings of an environment. Apple writes
/// "Production" and "Sandbox" (StoreKit 2's and the App Store Server API's
/// `environment`, verifyReceipt's `environment`); version 1 notifications
/// write "PROD" and "Sandbox". Storekeeper answers, stores and logs the same
/// names; metric labels are lower case.
extension AppleEnvironment {
    /// "Production", "Sandbox"; "Unspecified" for anything else.
    public var appleName: String {
        switch self {
        case .production: "Production"
        case .sandbox: "Sandbox"
        default: "Unspecified"
        }
    }

    /// "production", "sandbox": a bounded metric label.
    public var label: String { self == .sandbox ? "sandbox" : "production" }

    /// The environment Apple named exactly so ("Production", "Sandbox"); nil for any other text.
    public init?(appleName: String?) {
        switch appleName {
        case "Production": self = .production
        case "Sandbox": self = .sandbox
        default: return nil
        }
    }

    /// A version 1 notification's `environment`: "Sandbox" in any case is the
    /// sandbox; anything else ("PROD", missing) is production.
    public init(notificationV1Name name: String?) {
        self = name?.lowercased() == "sandbox" ? .sandbox : .production
    }
}
