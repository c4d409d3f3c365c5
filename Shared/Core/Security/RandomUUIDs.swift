import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Random (version 4) UUIDs cut from kernel random bytes fetched 4 KiB at a time.
///
/// Why not `UUID()`: on Linux, Foundation opens `/dev/urandom`, reads 16
/// bytes and closes it again for every id: three system calls, the `openat`
/// a path walk and a file allocation. The gateway names every request it
/// takes, so those were its only file opens (one per verification,
/// `perf stat` of the system calls). Here one `getrandom(2)` serves 256 ids
/// (glibc 2.36's `arc4random_buf`, which aborts rather than fail).
/// The bytes are the kernel's CSPRNG output either way; each is handed out
/// once, under a lock.
public final class RandomUUIDs: Sendable {
    public static let shared = RandomUUIDs()

    private struct Pool {
        var bytes = [UInt8](repeating: 0, count: RandomUUIDs.poolSize)
        /// The first byte not yet handed out: the pool starts used up.
        var next = RandomUUIDs.poolSize
    }

    static let poolSize = 4_096
    private let pool = Mutex(Pool())

    public init() {}

    /// A new random UUID, RFC 9562 version 4 and variant bits set.
    public func next() -> UUID {
        var uuid = pool.withLock { pool -> uuid_t in
            if pool.next + 16 > pool.bytes.count {
                pool.bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
                pool.next = 0
            }
            defer { pool.next += 16 }
            return pool.bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: pool.next, as: uuid_t.self) }
        }
        uuid.6 = uuid.6 & 0x0F | 0x40  // version 4
        uuid.8 = uuid.8 & 0x3F | 0x80  // RFC variant
        return UUID(uuid: uuid)
    }
}
