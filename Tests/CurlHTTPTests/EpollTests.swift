@testable import CurlHTTP
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The loop's epoll set: what it reports, and that one multi handle's late
/// REMOVE cannot unwatch a descriptor number another handle now uses.
@Suite struct EpollTests {
    @Test func aReadyDescriptorIsReportedWithItsTag() throws {
        try withReadablePipe { readEnd in
            let epoll = try #require(Epoll())
            defer { epoll.release() }
            #expect(epoll.watch(readEnd, tag: 3, readable: true, writable: false, isNew: true))
            #expect(ready(epoll).map { [$0.socket, Int32($0.tag)] } == [[readEnd, 3]])
        }
    }

    @Test func onlyTheTagThatRegisteredADescriptorUnwatchesIt() throws {
        try withReadablePipe { readEnd in
            let epoll = try #require(Epoll())
            defer { epoll.release() }
            // Handle 0 had the number first; handle 1 registered it since.
            epoll.watch(readEnd, tag: 0, readable: true, writable: false, isNew: true)
            epoll.watch(readEnd, tag: 1, readable: true, writable: false, isNew: true)
            epoll.unwatch(readEnd, tag: 0)
            #expect(ready(epoll).map(\.tag) == [1])
            epoll.unwatch(readEnd, tag: 1)
            #expect(ready(epoll).isEmpty)
        }
    }

    /// What one non-blocking wait reports.
    private func ready(_ epoll: Epoll) -> [(socket: Int32, tag: UInt32)] {
        var reported: [(socket: Int32, tag: UInt32)] = []
        _ = epoll.wait(timeoutMilliseconds: 0) { socket, tag, _ in reported.append((socket, tag)) }
        return reported
    }

    /// A pipe with a byte waiting in it, so its read end stays readable.
    private func withReadablePipe(_ body: (Int32) throws -> Void) throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        var byte: UInt8 = 1
        try #require(write(ends[1], &byte, 1) == 1)
        try body(ends[0])
    }
}
