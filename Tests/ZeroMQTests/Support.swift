import ZeroMQTestSupport
import Foundation
import Synchronization
import Testing


@testable import ZeroMQ

/// Runs `body` while `loops` run in a task group; cancels them afterwards
/// (their `run()` then returns) whatever `body` did.
@discardableResult
func withRunning<T: Sendable>(
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

/// A value a socket loop's thread sets (e.g. the endpoint it bound) and a test reads.
final class Box<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)

    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    var current: Value? { value.withLock { $0 } }

    /// The value once set, within a bounded wait.
    func wait() async throws -> Value {
        _ = await eventually { current != nil }
        return try #require(current)
    }
}

/// A frame holding `value` big-endian: sequence numbers in test messages.
func frame(_ value: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt64(value).bigEndian) { Array($0) }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A count shared between tasks.
final class Counter: Sendable {
    private let count = Mutex(0)

    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
