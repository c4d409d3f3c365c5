/// Replaces every occurrence of the configured secrets in text about to be
/// logged. The `Secret` type already keeps secrets out of interpolation; this
/// is the second line of defence for a secret that arrives as plain text (a
/// library echoing a header, an error quoting a request).
public struct SecretRedactor: Sendable {
    public static let replacement = "<redacted>"
    private let secrets: [String]

    /// Secrets shorter than 4 characters are ignored: redacting them would
    /// mangle ordinary words and they are not worth protecting anyway.
    public init(secrets: [Secret]) {
        self.secrets = secrets.map(\.revealed).filter { $0.count >= 4 }.sorted { $0.count > $1.count }
    }

    public var isEmpty: Bool { secrets.isEmpty }

    public func redact(_ text: String) -> String {
        var result = text
        for secret in secrets where result.contains(secret) {
            result = result.replacing(secret, with: Self.replacement)
        }
        return result
    }
}
