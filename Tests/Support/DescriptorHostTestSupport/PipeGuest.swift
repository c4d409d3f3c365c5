import Foundation
import OSThread
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A guest whose one descriptor is a pipe's read end, which the test writes
/// to; it counts its turns, notes the threads it was called on and answers
/// each turn as told (by default: wait for the pipe).
public final class PipeGuest: DescriptorGuest, Sendable {
    private struct State {
        var services = 0
        var threads: Set<String> = []
        var detachments: [Bool] = []
        var answer: @Sendable (Int) -> DescriptorGuestTurn = { _ in .wait(milliseconds: nil) }
    }

    private let readEnd: Int32
    private let writeEnd: Int32
    private let state = Mutex(State())

    public init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    public var services: Int { state.withLock { $0.services } }
    public var threads: Set<String> { state.withLock { $0.threads } }
    public var detachments: [Bool] { state.withLock { $0.detachments } }

    /// How to answer the turn with this number (from 1).
    public func answer(_ answer: @escaping @Sendable (Int) -> DescriptorGuestTurn) { state.withLock { $0.answer = answer } }

    public func poke() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    public func attach() -> [Int32]? {
        note()
        return [readEnd]
    }

    public func service() -> DescriptorGuestTurn {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
        note()
        return state.withLock { state in
            state.services += 1
            return state.answer(state.services)
        }
    }

    public func detach(hostStopping: Bool) {
        note()
        state.withLock { $0.detachments.append(hostStopping) }
    }

    private func note() {
        let name = OSThread.currentName ?? ""
        state.withLock { _ = $0.threads.insert(name) }
    }
}
