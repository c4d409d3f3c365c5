/// Trouble the simulator's App Store Server API injects into one
/// environment: the faults of the next calls, one a call and in order (so a
/// test knows exactly what happens), then `always` for every later call
/// until the plan is replaced. Faults come before the token check, as a
/// load balancer's would.
public struct ServerAPIFaultPlan: SimFaultPlan, Equatable {
    public enum Fault: String, Decodable, Sendable, CaseIterable {
        /// 429 with `Retry-After` and RateLimitExceededError.
        case rateLimited = "429"
        /// 401, as for a revoked key.
        case unauthorized = "401"
        /// 500 with GeneralInternalError.
        case internalError = "500"
        /// 503 with no JSON body, as a load balancer answers.
        case unavailable = "503"
        /// Never answers: the caller's time-out ends it.
        case hang
    }

    public var next: [Fault] = []
    public var always: Fault?
    /// The `Retry-After` of a 429, in seconds.
    public var retryAfterSeconds = 1

    public init(next: [Fault] = [], always: Fault? = nil, retryAfterSeconds: Int = 1) {
        self.next = next
        self.always = always
        self.retryAfterSeconds = retryAfterSeconds
    }

    enum CodingKeys: String, CodingKey {
        case next, always
        case retryAfterSeconds = "retry_after_seconds"
    }

    /// Every field is optional in the admin API's JSON: what is left out is no fault.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        next = try container.decodeIfPresent([Fault].self, forKey: .next) ?? []
        always = try container.decodeIfPresent(Fault.self, forKey: .always)
        retryAfterSeconds = try container.decodeIfPresent(Int.self, forKey: .retryAfterSeconds) ?? 1
    }

    /// Checks the plan makes sense; the message names the field.
    public func validated() throws(FaultPlanError) -> ServerAPIFaultPlan {
        guard (0...3_600).contains(retryAfterSeconds) else {
            throw FaultPlanError(message: "retry_after_seconds must be between 0 and 3600")
        }
        guard next.count <= 10_000 else { throw FaultPlanError(message: "next holds at most 10000 faults") }
        return self
    }

    /// The fault of the call arriving now (nil: none), taken from `next` first.
    mutating func take() -> Fault? {
        next.isEmpty ? always : next.removeFirst()
    }
}
