import Foundation

/// The Apple payloads copied from `shared/fixtures/apple` (unchanged) into this target's resources.
enum Fixture {
    static func bytes(_ name: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures/verifyreceipt")
        else { throw CocoaError(.fileNoSuchFile) }
        return Array(try Data(contentsOf: url))
    }
}
