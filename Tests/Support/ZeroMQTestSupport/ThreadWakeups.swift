import Foundation

/// How often one of this process's threads was switched in, read from the
/// kernel (`/proc/self/task/<tid>/status`, as the benchmarks' `contextSwitches`
/// reads a whole process): the test of a loop that must not wake while idle.
/// A thread blocked in `poll` or `epoll_wait` counts nothing until something
/// wakes it.
public struct ThreadWakeups: Sendable {
    public let threadID: Int32

    /// The calling thread: call it where the loop's thread runs (a socket
    /// loop's `configure` does). `/proc/thread-self` links to
    /// `<pid>/task/<tid>` (Glibc's Swift module has neither `gettid` nor `SYS_gettid`).
    public static func current() -> ThreadWakeups {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return ThreadWakeups(threadID: Int32(link.split(separator: "/").last ?? "") ?? -1)
    }

    /// Voluntary plus involuntary context switches so far; nil when the
    /// thread is gone or its status cannot be read.
    public var count: Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(threadID)/status", encoding: .utf8)
        else { return nil }
        let counts = status.split(separator: "\n")
            .filter { $0.hasPrefix("voluntary_ctxt_switches:") || $0.hasPrefix("nonvoluntary_ctxt_switches:") }
            .compactMap { Int($0.split(separator: "\t").last ?? "") }
        return counts.count == 2 ? counts.reduce(0, +) : nil
    }

    /// The switches over `window` once the thread has settled (no switch in
    /// 100 ms, looked at for at most 10 s, so the turn that handled the last
    /// message is not counted); nil when the count cannot be read or the
    /// thread never settled.
    public func over(_ window: Duration) async -> Int? {
        var last = count
        var settled = false
        for _ in 0..<100 where !settled {
            try? await Task.sleep(for: .milliseconds(100))
            let now = count
            settled = now != nil && now == last
            last = now
        }
        guard settled, let before = last else { return nil }
        try? await Task.sleep(for: window)
        guard let after = count else { return nil }
        return after - before
    }
}
