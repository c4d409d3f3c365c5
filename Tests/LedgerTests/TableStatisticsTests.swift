import Testing

@testable import Ledger

@Suite("The sequencer refreshes the planner's statistics as the stream doubles")
struct TableStatisticsTests {
    @Test("Due after the first thousand events, then each time the stream has doubled")
    func dueWhenTheStreamDoubled() {
        var statistics = TableStatistics(analyzedAtHead: 0)
        #expect(!statistics.due(at: 999))
        #expect(statistics.due(at: 1_000))
        statistics.analyzedAtHead = 1_000
        #expect(!statistics.due(at: 1_999))
        #expect(statistics.due(at: 2_000))
        statistics.analyzedAtHead = 300_000
        #expect(!statistics.due(at: 599_999))
        #expect(statistics.due(at: 600_000))
    }
}
