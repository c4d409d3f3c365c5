import Testing

@testable import VerifierPool

/// getaddrinfo itself, on names the machine answers from its own files (no DNS query leaves it).
@Suite struct SystemResolverTests {
    @Test func localhostAndALiteralResolveToLoopback() async {
        guard case .addresses(let localhost) = await SystemResolver().resolve("localhost") else {
            Issue.record("localhost did not resolve")
            return
        }
        #expect(localhost.contains("127.0.0.1"))
        #expect(Set(localhost).count == localhost.count, "one entry per address")
        #expect(await SystemResolver().resolve("127.0.0.1") == .addresses(["127.0.0.1"]))
        #expect(await SystemResolver().resolve("::1") == .addresses(["::1"]))
    }

    @Test func aCancelledLookupAnswersAtOnce() async {
        let answer = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await SystemResolver().resolve("localhost")
        }.value
        #expect(answer == .failed("cancelled"))
    }
}
