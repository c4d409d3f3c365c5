#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOPosix
import Synchronization

/// Runs Swift concurrency's global executor on SwiftNIO's event loops.
///
/// Without this, every request crosses threads twice in each process: NIO
/// reads it on an event-loop thread, the handler's task runs on the
/// cooperative pool, and the answer goes back to the event loop. On a 2-core
/// machine running five processes those hand-offs (futex wake-ups and
/// context switches) were a fifth of each process's CPU. With the event loops
/// as the global executor, a task resumed from an event loop stays on it.
/// There is one loop per core (NIO's default), as the cooperative pool had,
/// unless the executable sized NIO's group first (the gateway's
/// `STOREKEEPER_HTTP_THREADS`, one by default).
///
/// Why not NIO's own `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`:
/// its loops run each global job as if on the loop's *serial* executor. A task
/// there is then not on the generic executor its nonisolated functions need,
/// so every call into one and every return from it was another enqueue and
/// another loop turn: 153 per request in the gateway, a sixth of its
/// instructions (callgrind). Here the job runs on the generic executor, as the
/// default pool runs it, and those calls stay synchronous.
///
/// Nothing in Storekeeper blocks a task's thread (libzmq, libcurl and SQLite
/// calls run on threads of their own), which this needs more than the
/// default pool does: a blocked event loop also stops its sockets.
public enum EventLoopExecutor {
    /// Call first in `main` (after sizing NIO's group, where the executable does),
    /// on the main thread, before anything awaits: a job
    /// enqueued on the default pool before the switch would run there.
    /// Returns false where the runtime offers no hook (then nothing changed).
    /// - Parameter group: NIO's singleton group, which the servers use; tests pass their own.
    @discardableResult
    public static func install(on group: MultiThreadedEventLoopGroup = .singleton) -> Bool {
        guard let hook = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else { return false }
        let slot = hook.assumingMemoryBound(to: UnsafeRawPointer?.self)
        precondition(slot.pointee == nil, "install the global executor once, before anything else does")
        installedGroup = group
        // The group is visible to every thread before the hook that reads it.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        slot.pointee = withUnsafeTemporaryAllocation(of: EnqueueGlobalHook.self, capacity: 1) { function in
            function.baseAddress!.initialize(to: { job, original in
                guard let group = installedGroup else { return original(job) }
                // `any()` is the loop the caller runs on, when it runs on one: no thread switch.
                group.any().execute { runOnGenericExecutor(job) }
            })
            // A thin function is one pointer: what the runtime's hook slot holds.
            return function.baseAddress!.withMemoryRebound(to: UnsafeRawPointer.self, capacity: 1) { $0.pointee }
        }
        return true
    }

    /// The runtime's hook: the job, and the default enqueue it replaces.
    private typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void
}

/// Written once, by `install`, before the hook that reads it is in place (a
/// thin function captures nothing).
nonisolated(unsafe) private var installedGroup: MultiThreadedEventLoopGroup?

/// The runtime's entry point for running a job on an executor (what
/// `UnownedJob.runSynchronously(on:)` calls), here with the generic executor:
/// the reference whose two words are zero, which the default pool passes.
@_silgen_name("swift_job_run")
private func swiftJobRun(_ job: UnownedJob, _ executor: UnownedSerialExecutor)

private func runOnGenericExecutor(_ job: UnownedJob) {
    swiftJobRun(job, unsafeBitCast((UInt(0), UInt(0)), to: UnownedSerialExecutor.self))
}
