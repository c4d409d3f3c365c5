import Foundation
import Synchronization

/// A wall clock a test moves by hand: the client's tokens and the simulator's
/// token check read the same one, so renewal is tested without sleeping.
final class TestClock: Sendable {
    private let time: Mutex<Date>

    init(_ start: Date = Date()) { time = Mutex(start) }

    func now() -> Date { time.withLock { $0 } }

    func advance(by seconds: TimeInterval) { time.withLock { $0 += seconds } }
}
