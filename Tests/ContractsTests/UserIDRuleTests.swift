import Contracts
import Testing

struct UserIDRuleTests {
    @Test(arguments: ["u", String(repeating: "a", count: 128), "user 42 ~!", String(repeating: "é", count: 128), "ユーザー"])
    func printableIDsUpTo128CharactersAreAccepted(_ id: String) {
        #expect(UserIDRule.accepts(id))
    }

    @Test(arguments: ["", String(repeating: "a", count: 129), String(repeating: "é", count: 129), "a\tb", "a\u{7F}", "é\n", "\u{85}x"])
    func emptyLongOrControlIDsAreRefused(_ id: String) {
        #expect(!UserIDRule.accepts(id))
    }
}
