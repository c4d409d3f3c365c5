/// The shape of a compact JWS (three base64url parts), checked at the edge so
/// that obvious junk never reaches the verifier pool; whether it is Apple's,
/// the pool decides.
enum CompactJWSShape {
    static func matches(_ text: String) -> Bool {
        var parts = 1
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "."): parts += 1
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                continue
            default: return false
            }
        }
        return parts == 3
    }
}
