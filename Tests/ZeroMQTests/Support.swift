import ZeroMQTestSupport
import Foundation
import Synchronization
import Testing


@testable import ZeroMQ

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

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A count shared between tasks.
final class Counter: Sendable {
    private let count = Mutex(0)

    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
