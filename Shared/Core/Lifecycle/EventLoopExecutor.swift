import NIOCore
import NIOPosix

/// Runs Swift concurrency's global executor on SwiftNIO's event loops.
///
/// Without this, every request crosses threads twice in each process: NIO
/// reads it on an event-loop thread, the handler's task runs on the
/// cooperative pool, and the answer goes back to the event loop. On a 2-core
/// machine running five processes those hand-offs (futex wake-ups and
/// context switches) were a fifth of each process's CPU. With the event loops
/// as the global executor, a task resumed from an event loop stays on it.
/// There is one loop per core (NIO's default), as the cooperative pool had.
///
/// Nothing in Storekeeper blocks a task's thread (libzmq, libcurl and SQLite
/// calls run on threads of their own), which this needs more than the
/// default pool does: a blocked event loop also stops its sockets.
public enum EventLoopExecutor {
    /// Call first in `main`, on the main thread, before anything awaits: a job
    /// enqueued on the default pool before the switch would run there.
    /// Returns false where the runtime offers no hook (then nothing changed).
    @discardableResult
    public static func install() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
