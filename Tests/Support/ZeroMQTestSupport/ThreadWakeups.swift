#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How often one of this process's threads was switched in, read from the
/// kernel (`/proc/self/task/<tid>/status`): the test of a loop that must not
/// wake while idle. A thread blocked in `poll` or `epoll_wait` counts nothing
/// until something wakes it.
public struct ThreadWakeups: Sendable {
    public let threadID: Int32

    /// The calling thread: call it where the loop's thread runs (a socket
    /// loop's `configure` does). `/proc/thread-self` links to
    /// `<pid>/task/<tid>` (Glibc's Swift module has neither `gettid` nor `SYS_gettid`).
    public static func current() -> ThreadWakeups {
        var target = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/thread-self", &target, target.count - 1)
        let link = length > 0 ? String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return ThreadWakeups(threadID: Int32(link.split(separator: "/").last ?? "") ?? -1)
    }

    /// Voluntary plus involuntary context switches so far; nil when the
    /// thread is gone or the file cannot be read.
    public var count: Int? {
        guard let file = fopen("/proc/self/task/\(threadID)/status", "r") else { return nil }
        defer { fclose(file) }
        var total = 0
        var found = 0
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            for key in ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"] where text.hasPrefix(key) {
                guard let value = Int(text.dropFirst(key.count).filter { !$0.isWhitespace }) else { return nil }
                total += value
                found += 1
            }
        }
        return found == 2 ? total : nil
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
