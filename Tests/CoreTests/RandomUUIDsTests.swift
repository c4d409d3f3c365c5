import Foundation
import Synchronization
import Testing

@testable import StorekeeperCore

/// Request ids cut from pooled kernel random bytes: well-formed version 4
/// UUIDs, never repeated, across pool refills and threads.
@Suite struct RandomUUIDsTests {
    @Test func idsAreVersionFourRFCVariantAndNeverRepeatAcrossRefills() {
        let source = RandomUUIDs()
        // Three pools' worth (256 ids each), so refills are crossed.
        let ids = (0..<(3 * RandomUUIDs.poolSize / 16 + 7)).map { _ in source.next() }
        #expect(Set(ids).count == ids.count, "an id was handed out twice")
        for id in ids {
            #expect(id.uuid.6 >> 4 == 4, "version nibble of \(id)")
            #expect(id.uuid.8 >> 6 == 0b10, "variant bits of \(id)")
        }
        // Random bytes, not a counter or zeros: each free byte position takes many values.
        for position in [0, 5, 7, 9, 15] {
            let values = Set(ids.map { withUnsafeBytes(of: $0.uuid) { $0[position] } })
            #expect(values.count > 100, "byte \(position) took \(values.count) values")
        }
    }

    @Test func threadsDrawingAtOnceNeverGetTheSameId() async {
        let source = RandomUUIDs()
        let ids = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<500).map { _ in source.next() } }
            }
            return await group.reduce(into: [UUID]()) { $0 += $1 }
        }
        #expect(ids.count == 4_000)
        #expect(Set(ids).count == 4_000)
    }
}
