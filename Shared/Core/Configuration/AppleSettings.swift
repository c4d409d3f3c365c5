import Foundation

/// How the verifier pool talks to Apple.
public struct AppleSettings: Sendable {
    /// `STOREKEEPER_APPLE_PRODUCTION_URL`: tried first for every receipt.
    public var productionURL: String
    /// `STOREKEEPER_APPLE_SANDBOX_URL`: tried on 21007 (sandbox receipt sent to production).
    public var sandboxURL: String
    /// `STOREKEEPER_APPLE_SHARED_SECRET`: sent as `password`; required by auto-renewable receipts.
    public var sharedSecret: Secret?
    /// `STOREKEEPER_BUNDLE_IDS`: receipts of other bundles are `bundle_mismatch`; required by the
    /// gateway and the verifiers (`requireBundleIDs`).
    public var bundleIDs: [String]
    /// `STOREKEEPER_ACCEPT_SANDBOX`: false refuses sandbox purchases (`sandbox_not_accepted`).
    public var acceptSandbox: Bool
    /// `STOREKEEPER_VERIFY_DEADLINE_MS`: one verification, retries and fallback included.
    public var verifyDeadline: Duration
    /// `STOREKEEPER_APPLE_CONNECT_TIMEOUT_MS`: connecting to Apple, per attempt.
    public var connectTimeout: Duration
    /// `STOREKEEPER_APPLE_ATTEMPT_TIMEOUT_MS`: one Apple call from start to last byte.
    public var attemptTimeout: Duration
    /// `STOREKEEPER_VERIFIER_MAX_IN_FLIGHT`: Apple calls one verifier runs at once.
    public var maxInFlight: Int
    /// `STOREKEEPER_APPLE_CA_FILE`: PEM certificates trusted for Apple's https endpoints instead of
    /// the system's (tests and the simulator only); nil for the system's.
    public var caFile: String?
    /// `STOREKEEPER_JWS_EXTRA_ROOTS`: PEM files trusted beside Apple Root CA - G3 (tests and the simulator only).
    public var jwsExtraRootFiles: [String]
    /// `STOREKEEPER_APPLE_APP_ID`: the app's numeric Apple ID, which production signed data names (`appAppleId`).
    public var appAppleID: Int64?
    /// `STOREKEEPER_RECEIPT_VERIFICATION`: verifyReceipt, or the App Store Server API's history (`server_api`).
    public var receiptVerification: ReceiptVerificationMode

    /// The gateway and the verifiers refuse to start without a bundle list:
    /// without one, any app's receipt would be credited.
    public func requireBundleIDs() throws(ConfigurationError) {
        guard bundleIDs.isEmpty else { return }
        throw ConfigurationError(
            variable: ConfigurationVariable.bundleIDs.rawValue,
            reason: "required: the comma list of your apps' bundle ids (without it any app's receipt would be credited)")
    }

    /// `STOREKEEPER_APPLE_CA_FILE` when set, once it is known to be readable:
    /// curl would only fail each call, as Apple being unreachable.
    public func readableCAFile() throws(ConfigurationError) -> String? {
        guard let caFile else { return nil }
        guard FileManager.default.isReadableFile(atPath: caFile) else {
            throw ConfigurationError(variable: ConfigurationVariable.appleCAFile.rawValue, reason: "cannot read \(caFile)")
        }
        return caFile
    }

    public init(reader: EnvironmentReader) throws(ConfigurationError) {
        productionURL = try reader.httpURL(.appleProductionURL) ?? ""
        sandboxURL = try reader.httpURL(.appleSandboxURL) ?? ""
        sharedSecret = reader.secret(.appleSharedSecret)
        bundleIDs = reader.list(.bundleIDs)
        acceptSandbox = try reader.boolean(.acceptSandbox)
        verifyDeadline = try reader.milliseconds(.verifyDeadline, in: 100...600_000)
        connectTimeout = try reader.milliseconds(.appleConnectTimeout, in: 10...120_000)
        attemptTimeout = try reader.milliseconds(.appleAttemptTimeout, in: 10...600_000)
        maxInFlight = try reader.integer(.verifierMaxInFlight, in: 1...100_000)
        caFile = reader.raw(.appleCAFile)
        jwsExtraRootFiles = reader.list(.jwsExtraRoots)
        receiptVerification = try reader.choice(.receiptVerification)
        appAppleID = try reader.raw(.appleAppID).map { text throws(ConfigurationError) in
            guard let id = Int64(text), id > 0 else {
                throw ConfigurationError(
                    variable: ConfigurationVariable.appleAppID.rawValue,
                    reason: "expected the app's numeric Apple ID (App Store Connect, App Information), got '\(text)'")
            }
            return id
        }
        if connectTimeout > attemptTimeout {
            throw ConfigurationError(
                variable: ConfigurationVariable.appleConnectTimeout.rawValue,
                reason: "must not exceed \(ConfigurationVariable.appleAttemptTimeout.rawValue)")
        }
    }
}
