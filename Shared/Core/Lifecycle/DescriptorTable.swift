import Foundation

/// Linux keeps a process's open files in a table that doubles when a new
/// descriptor does not fit (at 256, 512, 1,024 ...). In a process with more
/// than one thread each doubling waits for an RCU grace period, and every
/// thread that opens a descriptor meanwhile (an accept, a connect) waits with
/// it: 7-23 ms a doubling on this machine (`socket()` timed in a loop). A
/// gateway whose clients ramp from a hundred connections to thousands, or a
/// verifier opening a connection per Apple call, stalled every request in
/// flight at each doubling: the benchmark's latency runs showed the slowest
/// answers bunched at the 256th, 512th, 1,024th and 2,048th connection. So a
/// service grows its table once, at start, to what it may use.
public enum DescriptorTable {
    /// The most slots reserved at start (`OpenFileLimit.raiseForConnections`):
    /// 65,536 take 512 KiB of kernel memory.
    /// A process past that grows as before.
    public static let startReserve = 65_536

    /// Grows the table to hold at least `count` descriptors (below the soft
    /// limit on open files) and returns its size, read back from
    /// `/proc/self/status`; nil when it could not tell. Opens and closes one
    /// descriptor of its own, and takes none that is open.
    @discardableResult
    public static func reserve(_ count: Int) -> Int? {
        if count > 1, count <= Int32.max {
            let probe = open("/dev/null", O_RDONLY | O_CLOEXEC)
            if probe >= 0 {
                // F_DUPFD takes the lowest free descriptor at or above the one asked for, so
                // nothing open is replaced; the table grows to hold it.
                let high = fcntl(probe, F_DUPFD_CLOEXEC, Int32(count - 1))
                if high >= 0 { close(high) }
                close(probe)
            }
        }
        return size()
    }

    /// The table's size now (`FDSize` in `/proc/PID/status`): this process's, or process `pid`'s.
    public static func size(ofProcess pid: Int32? = nil) -> Int? {
        let path = "/proc/\(pid.map { String($0) } ?? "self")/status"
        guard let status = try? String(contentsOfFile: path, encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("FDSize:") })
        else { return nil }
        return Int(line.dropFirst("FDSize:".count).trimmingCharacters(in: .whitespaces))
    }
}
