import Testing

@testable import StorekeeperCore

/// The App Store Server API's settings: off with no credentials, all three or
/// none, the app's Apple ID and a bundle with them, and Apple's URLs by default.
@Suite struct ServerAPISettingsTests {
    static let complete = [
        "STOREKEEPER_APPLE_ISSUER_ID": "57246542-96fe-1a63-e053-0824d011072a", "STOREKEEPER_APPLE_KEY_ID": "2X9R4HXF34",
        "STOREKEEPER_APPLE_PRIVATE_KEY_FILE": "/etc/storekeeper/AuthKey_2X9R4HXF34.p8", "STOREKEEPER_APPLE_APP_ID": "1470168868",
        "STOREKEEPER_BUNDLE_IDS": "com.example.app,com.example.other",
    ]

    func configuration(_ variables: [String: String]) throws -> StorekeeperConfiguration {
        try StorekeeperConfiguration(reader: EnvironmentReader(variables))
    }

    @Test func noCredentialsTurnTheAPIOff() throws {
        #expect(try configuration([:]).serverAPI == nil)
        let appOnly = try configuration(["STOREKEEPER_APPLE_APP_ID": "1470168868"])
        #expect(appOnly.serverAPI == nil)
        #expect(appOnly.apple.appAppleID == 1_470_168_868)
    }

    @Test func allCredentialsTurnItOnWithApplesURLs() throws {
        let settings = try #require(try configuration(Self.complete).serverAPI)
        #expect(settings.issuerID == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(settings.keyID == "2X9R4HXF34")
        #expect(settings.privateKeyFile == "/etc/storekeeper/AuthKey_2X9R4HXF34.p8")
        #expect(settings.appAppleID == 1_470_168_868)
        #expect(settings.bundleID == "com.example.app", "the first bundle: the tokens name one app")
        #expect(settings.productionURL == "https://api.storekit.itunes.apple.com")
        #expect(settings.sandboxURL == "https://api.storekit-sandbox.itunes.apple.com")
        let local = try #require(
            try configuration(
                Self.complete.merging([
                    "STOREKEEPER_APPLE_API_PRODUCTION_URL": "http://127.0.0.1:8090/production",
                    "STOREKEEPER_APPLE_API_SANDBOX_URL": "http://127.0.0.1:8090/sandbox",
                ]) { $1 }
            ).serverAPI)
        #expect(local.productionURL == "http://127.0.0.1:8090/production")
    }

    @Test(arguments: [
        "STOREKEEPER_APPLE_ISSUER_ID", "STOREKEEPER_APPLE_KEY_ID", "STOREKEEPER_APPLE_PRIVATE_KEY_FILE",
        "STOREKEEPER_APPLE_APP_ID", "STOREKEEPER_BUNDLE_IDS",
    ])
    func aPartialSetNamesTheMissingVariable(_ missing: String) {
        var variables = Self.complete
        variables[missing] = nil
        #expect {
            try configuration(variables)
        } throws: { error in
            (error as? ConfigurationError)?.variable == missing
        }
    }

    @Test(arguments: [
        ("STOREKEEPER_APPLE_APP_ID", "com.example.app"), ("STOREKEEPER_APPLE_APP_ID", "-5"),
        ("STOREKEEPER_APPLE_API_PRODUCTION_URL", "api.storekit.itunes.apple.com"), ("STOREKEEPER_SIM_PAGE_SIZE", "0"),
    ])
    func aBadValueNamesItsVariable(_ variable: String, _ value: String) {
        #expect {
            try configuration([variable: value])
        } throws: { error in
            (error as? ConfigurationError)?.variable == variable
        }
    }
}
