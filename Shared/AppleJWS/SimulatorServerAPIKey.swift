/// The simulator's App Store Connect API key, so the App Store Server API
/// runs end to end with no Apple account: `storekeeper-sim` checks tokens
/// against this key, `storekeeper up --sim` gives it to the verifiers (as a
/// `.p8` file in the run's own directory), and `storekeeper apple --sim`
/// signs with it.
///
/// TEST ONLY. It is a P-256 key made for this purpose (with openssl); Apple
/// knows nothing of it, so a token it signs is refused by Apple (401), and
/// only the simulator accepts it.
public enum SimulatorServerAPIKey {
    /// `STOREKEEPER_APPLE_ISSUER_ID` for the simulator.
    public static let issuerID = "57246542-96fe-1a63-e053-0824d0110000"
    /// `STOREKEEPER_APPLE_KEY_ID` for the simulator (App Store Connect key ids are 10 characters).
    public static let keyID = "SIMTEST001"
    /// The app's Apple ID the simulator answers with when `STOREKEEPER_APPLE_APP_ID` names none.
    public static let appAppleID: Int64 = 1_234_567_890
    /// The `.p8`: PKCS#8 PEM.
    public static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgu60uc7oN7lmA+Ey3
        x3TQlECBB+Fijh6zHQJOfdsBagqhRANCAATHAE7TTZSU5O+Ex04JEnNgSp+1es9z
        Mlk3k/w3SLfLHdZK8Aofaj5uBsG7NE5PgIZQK3B4sKg8ZJiRBMlHSm2v
        -----END PRIVATE KEY-----
        """
}
