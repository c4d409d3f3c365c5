// Which rate (b) offers next. First the rising rates, in turn, until the first
// the server does not keep up with. That leaves a bracket as wide as one
// step (250/s by default), and a ratio of two such brackets spans 1.5-1.8
// where the target is one number, 2. So when the miss gives no rate of its own
// (failed, or backlogged), the bracket is halved `refinements` times: half way
// between the last rate kept up with and the lowest missed. A step that
// answered nothing ends the search: the server is gone, and a halving run
// against it would narrow the bracket with steps that measured nothing.

public struct RateSearch: Sendable {
    /// No halving leaves a bracket narrower than this: runs at one rate differ by about as much.
    public static let narrowest = 50.0

    private let rising: [Double]
    private var refinementsLeft: Int
    public private(set) var steps: [(offered: Double, outcome: RateStepOutcome)] = []

    /// - Parameters:
    ///   - rising: the rates offered first, lowest first.
    ///   - refinements: at most this many halvings after the first miss.
    public init(rising: [Double], refinements: Int) {
        self.rising = rising
        self.refinementsLeft = refinements
    }

    public var sustained: SustainedRate { SustainedRate(steps: steps) }

    /// The rate to offer next; nil when the search is over.
    public mutating func next() -> Double? {
        guard let last = steps.last else { return rising.first }
        if last.outcome == .unanswered { return nil }
        if last.outcome == .keptUp, steps.allSatisfy({ $0.outcome == .keptUp }) {
            return rising.first { $0 > last.offered }
        }
        let bounds = sustained
        guard refinementsLeft > 0, let high = bounds.high, bounds.low > 0, high - bounds.low >= Self.narrowest * 2
        else { return nil }
        refinementsLeft -= 1
        return ((bounds.low + high) / 2 / 10).rounded() * 10
    }

    public mutating func record(offered: Double, _ outcome: RateStepOutcome) {
        steps.append((offered, outcome))
    }
}
