import Foundation
import Synchronization

/// Interleaves the output of every child on this process's standard output,
/// each line prefixed with its child's name (`verifier-2 | ...`). Whole lines
/// only, so two children never mix within one line.
final class PrefixedOutput: Sendable {
    private let width: Int
    private let writeLock = Mutex(())

    init(names: [String]) {
        width = names.map(\.count).max() ?? 0
    }

    /// A sink for one child's output chunks; it keeps the partial last line until its end arrives.
    func sink(for name: String) -> @Sendable (Data) -> Void {
        let prefix = Array((name.padding(toLength: width, withPad: " ", startingAt: 0) + " | ").utf8)
        let pending = Mutex([UInt8]())
        return { [self] chunk in
            let lines: [UInt8]? = pending.withLock { pending in
                pending += chunk
                guard let lastNewline = pending.lastIndex(of: UInt8(ascii: "\n")) else { return nil }
                let complete = Array(pending[...lastNewline])
                pending.removeSubrange(...lastNewline)
                return complete
            }
            guard let lines else { return }
            var out: [UInt8] = []
            for line in lines.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast() {
                out += prefix + line + [UInt8(ascii: "\n")]
            }
            write(out)
        }
    }

    /// Writes straight to the descriptor (no buffering): a reader of a pipe sees each line at once.
    func write(_ bytes: [UInt8]) {
        writeLock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Foundation.write(1, $0.baseAddress, $0.count) }
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
