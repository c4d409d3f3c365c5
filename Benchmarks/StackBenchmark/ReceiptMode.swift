// How the bench stack's verifiers read receipts: Apple's verifyReceipt, or
// the receipt's ids read locally and the App Store Server API's signed
// history (the simulator plays both, with its test key and signing chain).
import AppleJWS
import Foundation

enum ReceiptMode: String {
    case verifyReceipt = "verify_receipt"
    case serverAPI = "server_api"

    /// What the verifiers need for this mode; the key and the simulator's root go in `directory`.
    func verifierEnvironment(simulator base: String, directory: String) throws -> [String: String] {
        guard self == .serverAPI else { return [:] }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keyFile = directory + "/AuthKey.p8"
        let rootFile = directory + "/sim-root.pem"
        try SimulatorServerAPIKey.privateKeyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
        try SimulatorSigningChain.rootCertificatePEM.write(toFile: rootFile, atomically: true, encoding: .utf8)
        return [
            "STOREKEEPER_RECEIPT_VERIFICATION": rawValue,
            "STOREKEEPER_JWS_EXTRA_ROOTS": rootFile,
            "STOREKEEPER_APPLE_API_PRODUCTION_URL": base + "/production",
            "STOREKEEPER_APPLE_API_SANDBOX_URL": base + "/sandbox",
            "STOREKEEPER_APPLE_ISSUER_ID": SimulatorServerAPIKey.issuerID,
            "STOREKEEPER_APPLE_KEY_ID": SimulatorServerAPIKey.keyID,
            "STOREKEEPER_APPLE_PRIVATE_KEY_FILE": keyFile,
            "STOREKEEPER_APPLE_APP_ID": String(SimulatorServerAPIKey.appAppleID),
        ]
    }
}
