import OSThread
import Synchronization
import Testing

@Suite("OS threads: named from inside, before their body runs", .timeLimit(.minutes(1)))
struct OSThreadTests {
    /// Starts a thread and returns the name its body saw.
    private func nameSeen(starting name: String) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let started = OSThread.start(name: name) { continuation.resume(returning: OSThread.currentName) }
            #expect(started)
            if !started { continuation.resume(returning: nil) }
        }
    }

    @Test func theBodyRunsUnderItsOwnNameNotItsCreators() async {
        #expect(await nameSeen(starting: "sk-test-1") == "sk-test-1")
        #expect(OSThread.currentName != "sk-test-1")
    }

    @Test func aLongNameKeepsItsFirst15Bytes() async {
        #expect(await nameSeen(starting: "a-name-longer-than-fifteen") == "a-name-longer-t")
    }

    @Test func aLongNonASCIINameIsCutBetweenCharacters() async {
        // "é" is two bytes: 7 of them fill 14, and the 15th byte would split the 8th.
        #expect(await nameSeen(starting: String(repeating: "é", count: 10)) == String(repeating: "é", count: 7))
    }

    @Test func manyThreadsEachSeeTheirOwnName() async {
        // Under load the Foundation way lost names: each of these must see its own.
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<50 {
                group.addTask { await nameSeen(starting: "sk-\(index)") == "sk-\(index)" }
            }
            for await sawItsOwn in group { #expect(sawItsOwn) }
        }
    }
}
