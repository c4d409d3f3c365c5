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
