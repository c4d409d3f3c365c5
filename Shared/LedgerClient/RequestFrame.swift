/// The ledger's request/reply wire (docs/ledger.md): a client's DEALER sends
/// [correlation id (8 bytes, big-endian), envelope]; the ledger's ROUTER sees
/// the client's identity in front and answers [identity, correlation id,
/// envelope]. An empty envelope frame is a ping, answered with an empty frame.
///
/// A record handed over by a verifier (`LedgerHandoff`) names the gateway to
/// answer: the verifier's DEALER sends [gateway route, correlation id,
/// envelope], and the ledger answers that gateway [`handedOver`, correlation
/// id, envelope]. The correlation id is then the gateway's pool request id,
/// not one of its ledger client's: the marker tells the two apart.
public enum RequestFrame {
    /// The first frame of an answer to a record a verifier handed over.
    public static let handedOver: [UInt8] = Array("handed-over".utf8)

    public static func encode(correlation: UInt64, payload: [UInt8]) -> [[UInt8]] {
        [bytes(of: correlation), payload]
    }

    /// The correlation id and payload of [correlation, payload], or nil for anything else.
    public static func decode(_ frames: some Collection<[UInt8]>) -> (correlation: UInt64, payload: [UInt8])? {
        guard frames.count == 2, let first = frames.first, let id = correlation(first),
            let payload = frames.dropFirst().first
        else { return nil }
        return (id, payload)
    }

    /// A verifier's hand-over: [gateway route, correlation, payload].
    public static func encodeHandOff(route: [UInt8], correlation: UInt64, payload: [UInt8]) -> [[UInt8]] {
        [route, bytes(of: correlation), payload]
    }

    /// The gateway route, correlation id and payload of a hand-over, or nil for anything else.
    public static func decodeHandOff(
        _ frames: some Collection<[UInt8]>
    ) -> (route: [UInt8], correlation: UInt64, payload: [UInt8])? {
        guard frames.count == 3, let route = frames.first, !route.isEmpty,
            let (id, payload) = decode(frames.dropFirst())
        else { return nil }
        return (route, id, payload)
    }

    /// The ledger's answer to a hand-over, as the gateway's DEALER receives it.
    public static func encodeHandedOverAnswer(correlation: UInt64, payload: [UInt8]) -> [[UInt8]] {
        [handedOver] + encode(correlation: correlation, payload: payload)
    }

    /// The correlation id and payload of an answer to a hand-over, or nil for anything else.
    public static func decodeHandedOverAnswer(
        _ frames: some Collection<[UInt8]>
    ) -> (correlation: UInt64, payload: [UInt8])? {
        guard frames.count == 3, frames.first == handedOver else { return nil }
        return decode(frames.dropFirst())
    }

    private static func bytes(of correlation: UInt64) -> [UInt8] {
        withUnsafeBytes(of: correlation.bigEndian) { Array($0) }
    }

    private static func correlation(_ frame: [UInt8]) -> UInt64? {
        guard frame.count == 8 else { return nil }
        return frame.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
