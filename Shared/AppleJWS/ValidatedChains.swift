import Crypto
import Foundation
import Synchronization

/// JWS headers whose certificate chain validated, each with the leaf's key and
/// the span in which every certificate of the chain is valid. A hit skips
/// decoding the header, parsing the certificates and validating the chain,
/// never the signature check: with them, a verification cost three times as
/// much (storekeeper-bench-verifier --jws). Bounded: when full it starts over
/// (Apple rotates leaves yearly; a flood of distinct chains is refused by
/// validation before it is ever stored).
final class ValidatedChains: Sendable {
    static let capacity = 64

    private struct Entry {
        let key: P256.Signing.PublicKey
        let from: Date, until: Date
    }
    private let entries = Mutex<[Substring: Entry]>([:])

    /// The leaf's key of `encodedHeader`'s chain, when it validated and is valid at `time`.
    func key(for encodedHeader: Substring, at time: Date) -> P256.Signing.PublicKey? {
        entries.withLock { entries in
            guard let entry = entries[encodedHeader], entry.from <= time, time <= entry.until else { return nil }
            return entry.key
        }
    }

    func insert(_ encodedHeader: Substring, key: P256.Signing.PublicKey, from: Date, until: Date) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll() }
            // A copy: the JWS the substring came from is not kept alive by the cache.
            entries[Substring(String(encodedHeader))] = Entry(key: key, from: from, until: until)
        }
    }
}
