import Hummingbird
import Synchronization

/// A token bucket per caller (API key, or everyone together when keys are
/// off): `perMinute` requests a minute on average, bursts up to a minute's
/// worth. A pure state machine: the clock is passed in.
struct TokenBuckets {
    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let perMinute: Int
    private var buckets: [Int: Bucket] = [:]

    init(perMinute: Int) {
        self.perMinute = perMinute
    }

    /// Takes a token for `caller`; nil when allowed, else the seconds until one is free.
    mutating func take(_ caller: Int, now: ContinuousClock.Instant) -> Int? {
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
        if let shared, let wait = shared.buckets.withLock({ $0.take(context.apiKeyIndex ?? -1, now: .now) }) {
            throw APIError.rateLimited(retryAfter: wait)
        }
        return try await next(request, context)
    }
}
