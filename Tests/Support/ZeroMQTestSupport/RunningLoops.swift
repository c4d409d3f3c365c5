import ZeroMQ

/// Runs `body` while `loops` run in a task group; cancels them afterwards
/// (their `run()` then returns) whatever `body` did.
@discardableResult
public func withRunning<T: Sendable>(
    _ loops: [ZMQSocketLoop], _ body: () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for loop in loops { group.addTask { try await loop.run() } }
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        group.cancelAll()
        try await group.waitForAll()
        return try result.get()
    }
}

/// A frame holding `value` big-endian: sequence numbers in test messages.
public func frame(_ value: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) }
}

