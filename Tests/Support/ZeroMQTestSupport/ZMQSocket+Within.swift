import ZeroMQ

extension ZMQSocket {
    /// The next message, polling without blocking the cooperative pool; nil after `limit`.
    public func receive(within limit: Duration) async throws -> [[UInt8]]? {
        let deadline = ContinuousClock.now + limit
        repeat {
            if let message = try receive(dontWait: true) { return message }
            try await Task.sleep(for: .milliseconds(1))
        } while ContinuousClock.now < deadline
        return try receive(dontWait: true)
    }
}
