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

    /// Compares in time independent of where the first difference is, so an
    /// attacker cannot learn a key a character at a time.
    public func matches(_ candidate: String) -> Bool {
        let a = Array(revealed.utf8)
        let b = Array(candidate.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            difference |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
        }
        return difference == 0
    }
}
