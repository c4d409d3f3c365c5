import Crypto
import Foundation
import StorekeeperCore

/// The App Store Connect API key the Server API's tokens are signed with: the
/// `.p8` file, a P-256 private key in PKCS#8 PEM (ES256).
///
/// Never shown: `description`, `debugDescription` and `dump` print
/// `<redacted>`, and a load error names the variable and the file, never
/// what the file holds.
public struct ServerAPISigningKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: P256.Signing.PrivateKey

    /// A `.p8` is a few hundred bytes; anything much larger is not one (and is not read whole).
    static let maximumFileBytes = 16 * 1_024

    private static let variable = ConfigurationVariable.applePrivateKeyFile.rawValue

    public init(key: P256.Signing.PrivateKey) {
        self.key = key
    }

    /// The key in `pem` (PKCS#8 `PRIVATE KEY`, or SEC1 `EC PRIVATE KEY`).
    public init(pem: String) throws(ConfigurationError) {
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            // Say which mistake it is without quoting anything of the file.
            if (try? P384.Signing.PrivateKey(pemRepresentation: pem)) != nil
                || (try? P521.Signing.PrivateKey(pemRepresentation: pem)) != nil
            {
                throw ConfigurationError(
                    variable: Self.variable,
                    reason: "the key is on another curve: App Store Connect keys (.p8) are P-256, for ES256")
            }
            throw ConfigurationError(
                variable: Self.variable, reason: "is not a P-256 private key in PEM (the .p8 file App Store Connect gives)")
        }
    }

    /// Reads and checks the file `STOREKEEPER_APPLE_PRIVATE_KEY_FILE` names.
    public static func load(file path: String) throws(ConfigurationError) -> ServerAPISigningKey {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ConfigurationError(variable: variable, reason: "cannot read \(path) (missing, or not readable by this user)")
        }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: maximumFileBytes + 1), data.count <= maximumFileBytes,
            let text = String(data: data, encoding: .utf8)
        else {
            throw ConfigurationError(variable: variable, reason: "\(path) is not a .p8 key file (too large, or not text)")
        }
        return try ServerAPISigningKey(pem: text)
    }

    /// ES256 over `input`: the raw 64-byte `r || s` a JWS carries.
    func sign(_ input: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: input).rawRepresentation)
    }

    public var publicKey: P256.Signing.PublicKey { key.publicKey }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: []) }
}
