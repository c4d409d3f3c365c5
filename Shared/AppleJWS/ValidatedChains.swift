import Foundation
import Synchronization

/// Certificate chains (leaf and intermediate DER) that validated, with the
/// span in which every certificate of the chain is valid. A hit skips the
/// chain validation, never the signature check. Bounded: when full it starts
/// over (Apple rotates leaves yearly; a flood of distinct chains is refused
/// by validation before it is ever stored).
final class ValidatedChains: Sendable {
    static let capacity = 64

    private struct Span { let from: Date, until: Date }
    private let spans = Mutex<[[UInt8]: Span]>([:])

    func contains(_ chain: [UInt8], at time: Date) -> Bool {
        spans.withLock { spans in
            guard let span = spans[chain] else { return false }
            return span.from <= time && time <= span.until
        }
    }

    func insert(_ chain: [UInt8], from: Date, until: Date) {
        spans.withLock { spans in
            if spans.count >= Self.capacity { spans.removeAll() }
            spans[chain] = Span(from: from, until: until)
        }
    }
}
