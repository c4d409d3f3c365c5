import Foundation

/// Every connection a service holds is a file descriptor (the gateway: one
/// per client; the verifier: one per Apple call in flight), and the soft
/// limit is often 1,024 (systemd's default) while the hard limit allows far
/// more. Past the soft limit, accepts and connects fail, and on Linux
/// libdispatch's worker monitor, which opens `/proc/<tid>/stat` once a second,
/// crashes the whole process (seen in the benchmark: SIGILL in
/// `_dispatch_workq_monitor_pools` at 10,000 connections). So each service
/// raises its soft limit to the hard limit at start, as Go's runtime does for
/// its programs.
public enum OpenFileLimit {
    /// The soft limit to ask for: the hard limit, capped by the kernel's
    /// per-process maximum (`fs.nr_open`; an infinite hard limit cannot be
    /// the soft one). Nil when the soft limit is already there or above.
    static func target(soft: rlim_t, hard: rlim_t, kernelMaximum: rlim_t?) -> rlim_t? {
        let ceiling = min(hard, kernelMaximum ?? hard)
        return soft < ceiling ? ceiling : nil
    }

    /// Raises this process's soft limit on open files to the hard limit.
    /// Returns the limit before and after (equal when nothing changed or the
    /// kernel refused: the process then runs with what it had).
    @discardableResult
    public static func raiseToHardLimit() -> (before: rlim_t, after: rlim_t) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        let before = limit.rlim_cur
        guard let wanted = target(soft: limit.rlim_cur, hard: limit.rlim_max, kernelMaximum: kernelMaximum()) else {
            return (before, before)
        }
        limit.rlim_cur = wanted
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (before, before) }
        return (before, wanted)
    }

    /// What every process that holds many connections does first: raises the
    /// soft limit (`raiseToHardLimit`), then grows the descriptor table to it
    /// (`DescriptorTable`, at most `DescriptorTable.startReserve` slots).
    /// Returns the limit before and after, and the table's size (nil when it
    /// could not tell).
    @discardableResult
    public static func raiseForConnections() -> (before: rlim_t, after: rlim_t, tableSlots: Int?) {
        let limit = raiseToHardLimit()
        let slots = DescriptorTable.reserve(min(Int(clamping: limit.after), DescriptorTable.startReserve))
        return (limit.before, limit.after, slots)
    }

    /// This process's soft limit on open files, or nil when it cannot be read.
    public static func current() -> rlim_t? {
        var limit = rlimit()
        return getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? limit.rlim_cur : nil
    }

    private static func kernelMaximum() -> rlim_t? {
        guard let text = try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8) else { return nil }
        return rlim_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
