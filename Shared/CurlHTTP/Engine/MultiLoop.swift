import CCurl
import Logging
import OSThread

/// The one curl loop of a client. Owns the multi handles (`MultiShard`) and
/// every easy handle and touches them from its own thread only (libcurl
/// handles are not thread-safe).
///
/// It drives curl through `curl_multi_socket_action`: curl says which sockets
/// to watch (socket callback) and when it next needs time (timer callback);
/// the loop waits in epoll and tells curl only about sockets that are ready.
/// Chosen over `curl_multi_poll` by measurement (2,000 transfers in flight
/// through a 1 s endpoint, this machine): the loop thread used 0.37-0.40 s
/// of CPU against 0.60-0.70 s (at 4,000: 0.85-0.90 s against 1.40-1.52 s),
/// because every `curl_multi_poll` turn hands the kernel every socket and
/// every `curl_multi_perform` visits every transfer, which adds up with the
/// verifier's default of 8,192 calls in flight.
///
/// Each turn: run the task jobs queued for this thread (`CurlLoopExecutor`),
/// take new requests and cancellations from `SharedState`, wait in epoll
/// until a socket is ready, curl's timer or a guest's deadline is due, or
/// a wake-up comes (a job, a request or a stop queued since writes one), act
/// on ready sockets and expired timers, and hand finished transfers back.
/// With none of these, the wait has no time-out: an idle loop never wakes.
final class MultiLoop {
    /// A client gets one shard per this many connections it may hold to one
    /// host (at least one shard, at most `maxShards`), which bounds the
    /// length of libcurl's walks (see `MultiShard`).
    static let connectionsPerShard = 256
    static let maxShards = 16

    let shards: [MultiShard]
    private let timers: ShardTimers
    let shared: SharedState
    let executor: CurlLoopExecutor
    let configuration: CurlHTTPClient.Configuration
    let logger: Logger
    private let epoll: Epoll
    var active: [UInt64: Transfer] = [:]
    var idleEasyHandles: [UnsafeMutableRawPointer] = []
    /// Loops served in this loop's turns (`CurlHTTPClient.adopt`).
    private var guests = DescriptorGuests()
    /// The epoll tag of guests' descriptors (shards use their index).
    private static let guestTag = UInt32.max - 1

    /// `nil` when curl or the kernel cannot make a multi handle or epoll set.
    init?(shared: SharedState, executor: CurlLoopExecutor, configuration: CurlHTTPClient.Configuration, logger: Logger) {
        guard let epoll = Epoll() else { return nil }
        // The per-host cap is split between the shards, so together they hold exactly it.
        let cap = configuration.maxConnectionsPerHost
        let count = max(1, min(Self.maxShards, cap / Self.connectionsPerShard))
        let timers = ShardTimers(shards: count)
        var shards: [MultiShard] = []
        for index in 0..<count {
            let share = cap / count + (index < cap % count ? 1 : 0)
            guard let shard = MultiShard(index: index, epoll: epoll, timers: timers, maxConnectionsPerHost: share) else {
                for made in shards { curl_multi_cleanup(made.multi) }
                epoll.release()
                return nil
            }
            shards.append(shard)
        }
        self.shards = shards
        self.timers = timers
        self.epoll = epoll
        self.shared = shared
        self.executor = executor
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs until stopped; then fails what is left with `.shutdown` and frees
    /// every handle. Returns the `CURLM_*` code when curl failed, else `nil`.
    func run() -> CURLMcode? {
        for shard in shards { shard.attachCallbacks() }
        let wakeDescriptor = epoll.wakeDescriptor
        shared.attach { Epoll.wake(wakeDescriptor) }

        let failure = turns()
        for transfer in active.values { retire(transfer) }
        active = [:]
        shared.finish()  // detaches the waker before the descriptor closes
        guests.detachAll(unwatch: unwatchGuest)
        for easy in idleEasyHandles { curl_easy_cleanup(easy) }
        idleEasyHandles = []
        for shard in shards { curl_multi_cleanup(shard.multi) }
        epoll.release()
        return failure
    }

    private func turns() -> CURLMcode? {
        var failure: CURLMcode?
        var running: Int32 = 0
        // Shards curl acted on this turn: only those can have finished transfers to read.
        var acted = [Bool](repeating: false, count: shards.count)
        func act(_ shard: MultiShard, socket: curl_socket_t, flags: Int32) {
            guard failure == nil else { return }
            acted[Int(shard.index)] = true
            let code = curl_multi_socket_action(shard.multi, socket, flags, &running)
            if code != CURLM_OK { failure = code }
        }
        while true {
            let taken = shared.takeJobsAndGuests()
            executor.run(taken.jobs)
            let work = shared.takeWork(freeSlots: configuration.maxConcurrentTransfers - active.count)
            for id in work.cancelled {
                if let transfer = active.removeValue(forKey: id) { retire(transfer) }
            }
            if work.stop { return nil }
            // Requests that fail before curl sees them (time spent queued used up their
            // time-out) are answered now: nothing would wake the wait below for them.
            shared.complete(start(work.started))
            // Attached before the wait: a guest adopted before the loop ran woke nothing.
            guests.attach(taken.guests) { epoll.watch($0, tag: Self.guestTag, readable: true, writable: false, isNew: true) }
            let waited = epoll.wait(timeoutMilliseconds: waitMilliseconds()) { socket, tag, flags in
                if tag == Self.guestTag {
                    guests.markReady(socket)
                } else {
                    act(shards[Int(tag)], socket: socket, flags: flags)
                }
            }
            if !guests.isEmpty { guests.service(now: .now, unwatch: unwatchGuest) }
            for index in timers.takeDue(now: ShardTimers.now) {
                act(shards[index], socket: CURL_SOCKET_BAD, flags: 0)  // CURL_SOCKET_TIMEOUT
            }
            shared.complete(collectFinished(from: &acted))
            if let failure { return failure }
            if !waited { return CURLM_INTERNAL_ERROR }
        }
    }

    private func unwatchGuest(_ descriptor: Int32) {
        epoll.unwatch(descriptor, tag: Self.guestTag)
    }

    /// Until the earliest of curl's timers and the guests' deadlines; 0 when
    /// one is due or a guest is ready; nil when there is neither.
    private func waitMilliseconds() -> Int32? {
        if guests.hasReady { return 0 }
        var wait = timers.millisecondsUntilEarliest(now: ShardTimers.now)
        if let deadline = guests.earliestDeadline {
            let left = deadline - .now
            let guestWait = left <= .zero ? 0 : left.curlMilliseconds
            wait = min(wait ?? guestWait, guestWait)
        }
        return wait.map { Int32(clamping: $0) }
    }
}
