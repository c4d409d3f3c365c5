import Crypto
import StorekeeperCore

/// A table's rows counted and hashed: SHA-256 over each row's canonical
/// encoding (`ImportValue.encode`), rows in key order. Both sides of an
/// import are hashed this way, so equal digests mean equal tables.
struct TableChecksum {
    private var hasher = SHA256()
    private(set) var rows = 0

    mutating func add(_ row: [ImportValue]) {
        hasher.update(data: ImportValue.encode(row))
        rows += 1
    }

    /// The digest, in lower-case hexadecimal.
    func finalize() -> String {
        Hex.lowercase(hasher.finalize())
    }
}
