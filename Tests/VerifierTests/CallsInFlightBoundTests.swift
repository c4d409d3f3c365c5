import Foundation
import Testing

@testable import Verifier

/// A verifier keeps no more Apple calls in flight than its open-file limit
/// can hold connections for.
struct CallsInFlightBoundTests {
    @Test func aLimitWithRoomLeavesTheConfiguredBound() {
        let bound = CallsInFlightBound.effective(configured: 8_192, openFileLimit: 20_000)
        #expect(bound.bound == 8_192)
        #expect(!bound.lowered)
    }

    @Test func aLowLimitLowersTheBoundAndKeepsDescriptorsForTheRest() {
        let bound = CallsInFlightBound.effective(configured: 8_192, openFileLimit: 1_024)
        #expect(bound.bound == 1_024 - CallsInFlightBound.reservedDescriptors)
        #expect(bound.lowered)
    }

    @Test func aLimitBelowTheReserveStillAllowsOneCall() {
        let bound = CallsInFlightBound.effective(configured: 8_192, openFileLimit: 100)
        #expect(bound.bound == 1)
        #expect(bound.lowered)
    }

    @Test func anInfiniteLimitLeavesTheConfiguredBound() {
        #expect(CallsInFlightBound.effective(configured: 100_000, openFileLimit: rlim_t.max) == (100_000, false))
    }

    @Test func anUnreadableLimitLeavesTheConfiguredBound() {
        #expect(CallsInFlightBound.effective(configured: 8_192, openFileLimit: nil) == (8_192, false))
    }
}
