/// The ledger's request/reply wire (docs/ledger.md): a client's DEALER sends
/// [correlation id (8 bytes, big-endian), envelope]; the ledger's ROUTER sees
/// the client's identity in front and answers [identity, correlation id,
/// envelope]. An empty envelope frame is a ping, answered with an empty frame.
public enum RequestFrame {
    public static func encode(correlation: UInt64, payload: [UInt8]) -> [[UInt8]] {
        [withUnsafeBytes(of: correlation.bigEndian) { Array($0) }, payload]
    }

    /// The correlation id and payload of [correlation, payload], or nil for anything else.
    public static func decode(_ frames: some Collection<[UInt8]>) -> (correlation: UInt64, payload: [UInt8])? {
        guard frames.count == 2, let first = frames.first, first.count == 8, let payload = frames.dropFirst().first
        else { return nil }
        return (first.reduce(0) { $0 << 8 | UInt64($1) }, payload)
    }
}
