#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A detached OS thread for the curl loop. The loop blocks in `poll(2)`;
/// blocking one of the cooperative pool's few threads (two on a 2-core
/// machine) would stall every task in the process, so it gets its own.
enum LoopThread {
    /// The thread's name (Linux allows 15 bytes).
    static let name = "curl-loop"

    /// Names the calling thread in profiles and /proc: a new thread inherits
    /// its creator's name, an event loop's. (Glibc's `pthread_setname_np`
    /// does not import; its /proc file is what it writes.)
    static func nameCurrentThread() {
        #if os(Linux)
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = name.withCString { write(descriptor, $0, strlen($0)) }
        close(descriptor)
        #endif
    }

    /// Starts `body` on a new thread. Returns `false` when the system refuses one.
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        guard pthread_create(&thread, nil, loopThreadMain, context) == 0 else {
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
}

/// The closure, boxed to cross `pthread_create`'s `void *` argument.
private final class ThreadBody {
    let run: @Sendable () -> Void

    init(_ run: @escaping @Sendable () -> Void) {
        self.run = run
    }
}

#if canImport(Darwin)
private func loopThreadMain(_ raw: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
    Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().run()
    return nil
}
#else
private func loopThreadMain(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let raw else { return nil }
    LoopThread.nameCurrentThread()
    Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue().run()
    return nil
}
#endif
