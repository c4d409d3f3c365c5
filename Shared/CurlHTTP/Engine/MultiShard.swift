import CCurl

/// One of the loop's curl multi handles, with what the loop tracks for it.
///
/// Why more than one: libcurl 7.88 (Debian 12's) walks the multi handle's
/// whole connection cache in `curl_multi_remove_handle` whenever the finished
/// transfer left its connection in the cache (`close_connect_only` in
/// `multi.c`), and walks the host's connections again to find an idle one
/// for each new transfer. Over HTTP/1.1 (plain http://, as to the simulator)
/// a verifier keeps one connection per Apple call in flight, thousands of
/// them: perf put a quarter of its CPU in that walk.
/// Each shard has its own cache, so each walk covers a shard's connections.
///
/// Lives on the loop thread only, like the loop.
final class MultiShard {
    let index: UInt32
    let multi: UnsafeMutableRawPointer
    private let epoll: Epoll
    /// This shard's part of the client's per-host connection cap.
    let maxConnectionsPerHost: Int
    /// The loop's timers, where curl's timer callback says when this shard next wants `CURL_SOCKET_TIMEOUT`.
    let timers: ShardTimers
    /// Transfers in this handle by origin (see `HTTPRequest.origin`).
    private var transfersByOrigin: [Substring: Int] = [:]

    /// `nil` when curl cannot make a multi handle.
    init?(index: Int, epoll: Epoll, timers: ShardTimers, maxConnectionsPerHost: Int) {
        guard let multi = curl_multi_init() else { return nil }
        self.index = UInt32(index)
        self.multi = multi
        self.epoll = epoll
        self.timers = timers
        self.maxConnectionsPerHost = maxConnectionsPerHost
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, maxConnectionsPerHost)
    }

    /// Transfers to `origin` this shard can take before one would wait
    /// inside curl for a connection (negative when some already do).
    func room(for origin: Substring) -> Int {
        maxConnectionsPerHost - transfersByOrigin[origin, default: 0]
    }

    func added(_ origin: Substring) {
        transfersByOrigin[origin, default: 0] += 1
    }

    func removed(_ origin: Substring) {
        let left = transfersByOrigin[origin, default: 1] - 1
        transfersByOrigin[origin] = left > 0 ? left : nil
    }

    /// Points curl's socket and timer callbacks at this shard. Unretained:
    /// the callbacks only run inside curl calls the loop makes while it holds
    /// its shards.
    func attachCallbacks() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = ccurl_multi_setopt_socket_function(multi, multiShardSocketCallback)
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
        _ = ccurl_multi_setopt_timer_function(multi, multiShardTimerCallback)
        _ = ccurl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
    }

    /// curl's socket callback: what to watch `socket` for. `isNew` is whether
    /// curl has this socket without our marker yet (`curl_multi_assign`).
    fileprivate func update(socket: Int32, what: Int32, isNew: Bool) {
        if what == CURL_POLL_REMOVE {
            epoll.unwatch(socket, tag: index)
            return
        }
        epoll.watch(
            socket, tag: index, readable: what & CURL_POLL_IN != 0, writable: what & CURL_POLL_OUT != 0,
            isNew: isNew)
        if isNew { _ = curl_multi_assign(multi, socket, Unmanaged.passUnretained(self).toOpaque()) }
    }
}

/// `CURLMOPT_SOCKETFUNCTION`. Plain functions, so they capture nothing; the
/// shard comes back from the user pointer.
private func multiShardSocketCallback(
    _ easy: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ what: Int32,
    _ userPointer: UnsafeMutableRawPointer?, _ socketPointer: UnsafeMutableRawPointer?
) -> Int32 {
    guard let userPointer else { return -1 }
    Unmanaged<MultiShard>.fromOpaque(userPointer).takeUnretainedValue()
        .update(socket: socket, what: what, isNew: socketPointer == nil)
    return 0
}

/// `CURLMOPT_TIMERFUNCTION`: -1 deletes the timer, 0 means "as soon as possible".
private func multiShardTimerCallback(
    _ multi: UnsafeMutableRawPointer?, _ timeoutMilliseconds: Int, _ userPointer: UnsafeMutableRawPointer?
) -> Int32 {
    guard let userPointer else { return -1 }
    let shard = Unmanaged<MultiShard>.fromOpaque(userPointer).takeUnretainedValue()
    shard.timers.set(Int(shard.index), milliseconds: timeoutMilliseconds)
    return 0
}
