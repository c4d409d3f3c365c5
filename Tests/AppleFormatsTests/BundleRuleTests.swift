import Testing

@testable import AppleFormats

/// The one bundle rule, as receipts and version 1 notifications (`acceptAny`)
/// and signed data (`refuse`) apply it.
@Suite struct BundleRuleTests {
    static let rule = BundleRule(allowed: ["com.example.app", "com.example.other"])
    static let unconfigured = BundleRule(allowed: [])

    @Test(arguments: [BundleRule.WhenUnconfigured.acceptAny, .refuse])
    func aConfiguredListDecidesAlike(_ policy: BundleRule.WhenUnconfigured) {
        #expect(Self.rule.verdict(for: "com.example.app", whenUnconfigured: policy) == .accepted)
        #expect(Self.rule.verdict(for: "com.example.other", whenUnconfigured: policy) == .accepted)
        #expect(Self.rule.verdict(for: "com.example.App", whenUnconfigured: policy) == .otherApp)
        #expect(Self.rule.verdict(for: "com.example.app ", whenUnconfigured: policy) == .otherApp)
        #expect(Self.rule.verdict(for: "", whenUnconfigured: policy) == .unnamed)
        #expect(Self.rule.verdict(for: nil, whenUnconfigured: policy) == .unnamed)
    }

    @Test func withoutAListReceiptsPassAndSignedDataDoesNot() {
        #expect(Self.unconfigured.verdict(for: "com.example.app", whenUnconfigured: .acceptAny) == .accepted)
        #expect(Self.unconfigured.verdict(for: "", whenUnconfigured: .acceptAny) == .accepted)
        #expect(Self.unconfigured.verdict(for: "com.example.app", whenUnconfigured: .refuse) == .unconfigured)
        #expect(Self.unconfigured.verdict(for: nil, whenUnconfigured: .refuse) == .unnamed)
    }

    @Test func duplicatesInTheListDoNotMatter() {
        #expect(BundleRule(allowed: ["a", "a"]).allowed == ["a"])
    }
}
