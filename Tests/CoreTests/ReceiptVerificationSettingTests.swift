import Testing

@testable import StorekeeperCore

/// `STOREKEEPER_RECEIPT_VERIFICATION`: verifyReceipt by default, the Server
/// API's history only with its credentials, and a word it does not know
/// stops the process naming the variable.
@Suite struct ReceiptVerificationSettingTests {
    func configuration(_ variables: [String: String]) throws -> StorekeeperConfiguration {
        try StorekeeperConfiguration(reader: EnvironmentReader(variables))
    }

    @Test func verifyReceiptIsTheDefault() throws {
        let configuration = try configuration([:])
        #expect(configuration.apple.receiptVerification == .verifyReceipt)
        try configuration.requireServerAPIForReceipts()
    }

    @Test func serverAPIIsReadInAnyCaseAndNeedsTheCredentials() throws {
        let alone = try configuration(["STOREKEEPER_RECEIPT_VERIFICATION": "Server_API"])
        #expect(alone.apple.receiptVerification == .serverAPI)
        #expect {
            try alone.requireServerAPIForReceipts()
        } throws: { error in
            (error as? ConfigurationError)?.variable == "STOREKEEPER_RECEIPT_VERIFICATION"
        }
        let credentialed = try configuration(
            ServerAPISettingsTests.complete.merging(["STOREKEEPER_RECEIPT_VERIFICATION": "server_api"]) { $1 })
        try credentialed.requireServerAPIForReceipts()
    }

    @Test(arguments: ["serverapi", "verifyReceipt", "both", "0"])
    func anotherWordNamesTheVariable(_ value: String) {
        #expect {
            try configuration(["STOREKEEPER_RECEIPT_VERIFICATION": value])
        } throws: { error in
            let error = error as? ConfigurationError
            return error?.variable == "STOREKEEPER_RECEIPT_VERIFICATION" && error?.reason.contains("verify_receipt, server_api") == true
        }
    }
}
