/// The verifier pool's wire protocol (docs/verifier-pool.md): every message
/// between a gateway's ROUTER and a verifier's DEALER starts with the
/// protocol tag and a command frame.
public enum PoolCommand: UInt8, Sendable {
    /// Verifier -> gateway: here I am, with [free, share]: how many more requests
    /// I can take now, out of how many in all.
    case ready = 1
    /// Verifier -> gateway: `credits` more requests may come.
    case credit = 2
    /// Gateway -> verifier: [request id, envelope].
    case request = 3
    /// Verifier -> gateway: [request id, envelope]; frees the slot the request held.
    case reply = 4
    /// Both ways, every second: I am alive.
    case heartbeat = 5
    /// Verifier -> gateway: send me nothing more (I am stopping after what I hold).
    case disconnect = 6
}

public enum PoolFrame {
    public static let tag: [UInt8] = Array("SKVP1".utf8)

    /// [tag, command, body...]
    public static func encode(_ command: PoolCommand, _ body: [[UInt8]] = []) -> [[UInt8]] {
        [tag, [command.rawValue]] + body
    }

    /// The command and body of a message, or nil for a message of another protocol or version.
    public static func decode(_ frames: some Collection<[UInt8]>) -> (PoolCommand, [[UInt8]])? {
        let frames = Array(frames)
        guard frames.count >= 2, frames[0] == tag, frames[1].count == 1, let command = PoolCommand(rawValue: frames[1][0])
        else { return nil }
        return (command, Array(frames.dropFirst(2)))
    }

    /// READY's body. Its first frame alone was the whole body at first, and a
    /// gateway of that release reads it as before.
    public static func ready(free: Int, share: Int) -> [[UInt8]] {
        encode(.ready, [uint32(UInt32(clamping: max(0, free))), uint32(UInt32(clamping: max(0, share)))])
    }

    public static func uint32(_ value: UInt32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    public static func uint32(_ frame: [UInt8]) -> UInt32? {
        guard frame.count == 4 else { return nil }
        return frame.reduce(0) { $0 << 8 | UInt32($1) }
    }

    public static func uint64(_ value: UInt64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    public static func uint64(_ frame: [UInt8]) -> UInt64? {
        guard frame.count == 8 else { return nil }
        return frame.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
