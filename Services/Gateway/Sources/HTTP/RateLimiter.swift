import Hummingbird
import Synchronization

/// A token bucket per caller (API key, or client address when keys are
/// off): `perMinute` requests a minute on average, bursts up to a minute's
/// worth. A pure state machine: the clock is passed in.
struct TokenBuckets {
    enum Caller: Hashable {
        /// The index of the API key that authenticated the request.
        case apiKey(Int)
        /// The client's IP address (keys are off).
        case address(String)
    }

    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    /// Past this many callers, buckets idle for a minute (full again, so they
    /// hold nothing a new bucket would not) are dropped: many addresses cannot
    /// grow the table without bound.
    static let sweepAbove = 100_000

    let perMinute: Int
    private var buckets: [Caller: Bucket] = [:]
    /// The size that starts the next sweep: twice what the last one kept. A
    /// sweep walks every bucket under the lock every request waits on; were
    /// it run for each new caller while all are active (a flood from many
    /// addresses), each would pay for a walk of them all.
    private var sweepAt: Int
    private let sweepFloor: Int
    /// How many sweeps have run (tests).
    private(set) var sweeps = 0

    init(perMinute: Int, sweepAbove: Int = Self.sweepAbove) {
        self.perMinute = perMinute
        self.sweepFloor = sweepAbove
        self.sweepAt = sweepAbove
    }

    var trackedCallers: Int { buckets.count }

    /// Takes a token for `caller`; nil when allowed, else the seconds until one is free.
    mutating func take(_ caller: Caller, now: ContinuousClock.Instant) -> Int? {
        if buckets.count > sweepAt, buckets[caller] == nil {
            buckets = buckets.filter { now - $0.value.updated < .seconds(60) }
            sweepAt = max(sweepFloor, 2 * buckets.count)
            sweeps += 1
        }
        let capacity = Double(perMinute)
        var bucket = buckets[caller] ?? Bucket(tokens: capacity, updated: now)
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        bucket.tokens = min(capacity, bucket.tokens + seconds * capacity / 60)
        bucket.updated = now
        defer { buckets[caller] = bucket }
        guard bucket.tokens >= 1 else {
            return max(1, Int(((1 - bucket.tokens) * 60 / capacity).rounded(.up)))
        }
        bucket.tokens -= 1
        return nil
    }
}

/// Answers `429 rate_limited` (with `Retry-After`) to a caller over its rate.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    /// Shared by every request (the middleware value is copied into the router).
    final class Shared: Sendable {
        let buckets: Mutex<TokenBuckets>
        init(_ buckets: TokenBuckets) { self.buckets = Mutex(buckets) }
    }

    private let shared: Shared?

    /// `perMinute` 0 turns limiting off.
    init(perMinute: Int) {
        shared = perMinute > 0 ? Shared(TokenBuckets(perMinute: perMinute)) : nil
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let caller = context.apiKeyIndex.map(TokenBuckets.Caller.apiKey) ?? .address(context.remoteAddress ?? "unknown")
        if let shared, let wait = shared.buckets.withLock({ $0.take(caller, now: .now) }) {
            throw APIError.rateLimited(retryAfter: wait)
        }
        return try await next(request, context)
    }
}
