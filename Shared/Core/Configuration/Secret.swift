/// A value that must never reach a log line, an error description or a
/// metric label: shared secrets and API keys.
///
/// Printing it in any way (`description`, `debugDescription`, string
/// interpolation, `dump`) shows `<redacted>`; code that needs the value says
/// so with `revealed`.
public struct Secret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The value itself. Use only where it is sent or compared.
    public let revealed: String

    public init(_ value: String) { self.revealed = value }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: []) }

}
