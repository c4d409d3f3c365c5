/// Comparison of secrets (API keys, the shared secret) in time independent of
/// where the first difference is, so an attacker cannot learn one a byte at a
/// time. Callers compare SHA-256 digests, so the secret's length does not show
/// either.
public enum ConstantTime {
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
