import Foundation
import Testing

@testable import StorekeeperCore

/// The soft limit on open files a service asks for at start.
struct OpenFileLimitTests {
    @Test func aSoftLimitBelowTheHardOneRisesToIt() {
        #expect(OpenFileLimit.target(soft: 1_024, hard: 524_288, kernelMaximum: 1_048_576) == 524_288)
    }

    /// RLIM_INFINITY is all ones.
    @Test func anInfiniteHardLimitGivesTheKernelsMaximum() {
        #expect(OpenFileLimit.target(soft: 1_024, hard: rlim_t.max, kernelMaximum: 1_048_576) == 1_048_576)
    }

    @Test func aLimitAlreadyAtTheCeilingIsLeftAlone() {
        #expect(OpenFileLimit.target(soft: 20_000, hard: 20_000, kernelMaximum: 1_048_576) == nil)
        #expect(OpenFileLimit.target(soft: 2_000_000, hard: rlim_t.max, kernelMaximum: 1_048_576) == nil)
    }

    @Test func withoutTheKernelsMaximumTheHardLimitCounts() {
        #expect(OpenFileLimit.target(soft: 256, hard: 4_096, kernelMaximum: nil) == 4_096)
    }
}

/// The descriptor table a service grows once at start. (Other suites run in
/// this process meanwhile, so these look only at what they own.)
struct DescriptorTableTests {
    @Test func reservingGrowsTheTableToHoldTheCountAskedFor() throws {
        let before = try #require(DescriptorTable.size())
        var limit = rlimit()
        try #require(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        try #require(before < Int(clamping: limit.rlim_cur), "the table already reaches the soft limit \(limit.rlim_cur)")
        let size = try #require(DescriptorTable.reserve(before + 1))
        #expect(size > before)
    }

    @Test func aDescriptorOpenWhereTheReservationReachesStaysOpenAndUnchanged() throws {
        let ends = UnsafeMutablePointer<Int32>.allocate(capacity: 2)
        defer { ends.deallocate() }
        try #require(pipe(ends) == 0)
        let top = try #require(DescriptorTable.size())
        // The pipe's write end again, as the highest descriptor the table holds now.
        let occupant = fcntl(ends[1], F_DUPFD_CLOEXEC, Int32(top - 1))
        defer {
            close(ends[0])
            close(ends[1])
            close(occupant)
        }
        try #require(occupant == Int32(top - 1), "descriptor \(top - 1) was taken already")

        DescriptorTable.reserve(top)

        #expect(write(occupant, "x", 1) == 1)
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 1)
        #expect(byte == UInt8(ascii: "x"))
    }
}
