import Contracts
import Foundation
import SwiftProtobuf
import Testing

@Suite struct ContractsRoundTripTests {
    @Test func everyMessageSurvivesBinaryAndJSONRoundTrips() throws {
        for message in SampleMessages.all {
            let bytes: [UInt8] = try message.serializedBytes()
            let decoded = try type(of: message).init(serializedBytes: bytes, extensions: nil, partial: false, options: BinaryDecodingOptions())
            #expect(decoded.isEqualTo(message: message), "binary round trip of \(type(of: message).protoMessageName)")

            let json = try message.jsonString()
            let fromJSON = try type(of: message).init(jsonString: json, extensions: nil, options: JSONDecodingOptions())
            #expect(fromJSON.isEqualTo(message: message), "JSON round trip of \(type(of: message).protoMessageName)")
        }
    }

    /// Field 4 was `traceparent`: an envelope from a build that still sets it is read as before.
    @Test func anEnvelopeCarryingTheRemovedTraceparentIsStillRead() throws {
        let envelope = Envelope(requestID: "r-1", deadlineMilliseconds: 7, body: .verifyRequest(VerifyRequest()))
        let traceparent = Array("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".utf8)
        let old = envelope.frame() + [0x22, UInt8(traceparent.count)] + traceparent
        let read = try Envelope(frame: old)
        #expect(read.requestID == "r-1")
        #expect(read.deadlineMs == 7)
        #expect(read.body == envelope.body)
    }

    /// Guards the sample set itself: a message or field added to a .proto file
    /// without a sample value here would otherwise never be round-tripped.
    @Test func samplesSetEveryFieldOfEveryMessageDeclaredInTheProtoFiles() throws {
        let declared = try ProtoDeclarations.read()
        #expect(declared.count >= 20)
        var setFields: [String: Set<String>] = [:]
        for message in SampleMessages.all {
            // Top-level lines of the text format are the fields this instance sets
            // (proto3 leaves defaults out unless the field is `optional`).
            let names = message.textFormatString().split(separator: "\n")
                .filter { !$0.hasPrefix(" ") }
                .map { String($0.prefix { $0 != ":" && $0 != " " }) }
            setFields[type(of: message).protoMessageName, default: []].formUnion(names)
        }
        for (message, fields) in declared {
            let name = "storekeeper.v1." + message
            #expect(setFields[name] != nil, "no sample of \(message)")
            let missing = fields.subtracting(setFields[name] ?? [])
            #expect(missing.isEmpty, "samples of \(message) leave \(missing.sorted()) unset")
        }
    }
}

/// The messages and field names declared in Shared/Proto, read from the files.
enum ProtoDeclarations {
    static func read() throws -> [String: Set<String>] {
        let directory = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Shared/Proto/storekeeper/v1")
        var messages: [String: Set<String>] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".proto") {
            var current: String?
            for line in try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            {
                if line.hasPrefix("message ") {
                    current = String(line.dropFirst("message ".count).prefix { $0 != " " && $0 != "{" })
                    messages[current!] = []
                } else if line.hasPrefix("}") {
                    current = nil
                } else if let message = current, let field = fieldName(in: line) {
                    messages[message]?.insert(field)
                }
            }
        }
        return messages
    }

    /// `  optional int64 expires_date_ms = 7;` gives `expires_date_ms`.
    private static func fieldName(in line: Substring) -> String? {
        let code = line.prefix { $0 != "/" }.trimmingCharacters(in: .whitespaces)
        guard code.hasSuffix(";"), code.contains(" = ") else { return nil }
        let words = code.split(separator: " ")
        guard let equals = words.firstIndex(of: "="), equals >= 2 else { return nil }
        return String(words[equals - 1])
    }
}
