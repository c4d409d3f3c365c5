#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A detached OS thread that names itself before it runs its body, for the
/// loops that block in `poll(2)` or on a semaphore (the curl loop, ZeroMQ
/// socket loops, the SQLite ledger's writer, `getaddrinfo`): blocking one of
/// the cooperative pool's few threads (two on a 2-core machine) would stall
/// every task in the process.
///
/// Why not Foundation's `Thread`: on Linux a new thread inherits its creator's
/// name (an event loop's, or a Dispatch worker's), and a name given to
/// `Thread.current` from inside sometimes never reached the OS thread (when the
/// thread ran before `start()` had recorded it), so profiles and
/// `/proc/<pid>/task/*/comm` showed the wrong thread.
public enum OSThread {
    /// Linux keeps a thread's name to 15 bytes.
    public static let nameLimit = 15

    /// Starts `body` on a new detached thread named `name` (as much of it
    /// as fits in `nameLimit` bytes, cut between characters). Returns
    /// `false`, running nothing, when the system refuses a thread.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(ThreadBody(name: name, run: body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        guard pthread_create(&thread, nil, threadMain, context) == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(context).release()
            return false
        }
        #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
        #else
        pthread_detach(thread)
        #endif
        return true
    }

    /// The calling thread's name as the OS has it; nil where it cannot be read.
    public static var currentName: String? {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &bytes, bytes.count)
        guard count > 0 else { return nil }
        return String(decoding: bytes[..<count].filter { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        #else
        return nil
        #endif
    }

    /// Names the calling thread. (Glibc's `pthread_setname_np` does not
    /// import; this /proc file is what it writes.)
    static func nameCurrentThread(_ name: String) {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(name.utf8.prefix(cutLength(of: name)))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        #endif
    }
}

extension OSThread {
    /// How many of `name`'s UTF-8 bytes fit in `nameLimit` without splitting a character's encoding.
    static func cutLength(of name: String) -> Int {
        var length = 0
        for scalar in name.unicodeScalars {
            let width = UTF8.width(scalar)
            guard length + width <= nameLimit else { break }
            length += width
        }
        return length
    }
}

/// The name and closure, boxed to cross `pthread_create`'s `void *` argument.
private final class ThreadBody {
    let name: String
    let run: @Sendable () -> Void

    init(name: String, run: @escaping @Sendable () -> Void) {
        self.name = name
        self.run = run
    }
}

#if canImport(Darwin)
private func threadMain(_ raw: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
    let body = Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue()
    body.name.withCString { _ = pthread_setname_np($0) }
    body.run()
    return nil
}
#else
private func threadMain(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    let body = Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue()
    OSThread.nameCurrentThread(body.name)
    body.run()
    return nil
}
#endif
