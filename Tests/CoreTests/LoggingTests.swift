import Foundation
import Logging
import Testing

@testable import StorekeeperCore

@Suite struct LoggingTests {
    @Test func jsonLinesAreJSONObjectsWithMetadata() throws {
        let (logger, lines) = LoggingBootstrap.capturingLogger(
            label: "storekeeper-test", settings: LogSettings(level: .info, format: .json))
        logger.info("verified \"receipt\"\n", metadata: ["apple.status": "0", "request.id": "req-1"])
        logger.debug("below the level")
        let captured = lines()
        #expect(captured.count == 1)
        let line = try #require(captured.first)
        #expect(line.hasSuffix("}\n"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(object["msg"] == "verified \"receipt\"\n")
        #expect(object["level"] == "info")
        #expect(object["logger"] == "storekeeper-test")
        #expect(object["apple.status"] == "0")
        #expect(object["request.id"] == "req-1")
        #expect(object["ts"]?.isEmpty == false)
    }

    @Test func textLinesCarryLevelLabelAndMetadata() throws {
        let (logger, lines) = LoggingBootstrap.capturingLogger(
            label: "storekeeper-test", settings: LogSettings(level: .debug, format: .text))
        logger.debug("hello", metadata: ["b": "2", "a": "1"])
        let line = try #require(lines().first)
        #expect(line.contains(" DEBUG storekeeper-test: hello a=1 b=2"))
    }

    @Test(arguments: [LogSettings.Format.text, .json])
    func secretsAreRedactedFromMessagesAndMetadata(format: LogSettings.Format) throws {
        let secrets = [Secret("shared-secret-0123"), Secret("sk-live-key-9876")]
        let (logger, lines) = LoggingBootstrap.capturingLogger(
            label: "t", settings: LogSettings(level: .trace, format: format), secrets: secrets)
        logger.error(
            "apple said no for password=shared-secret-0123",
            metadata: ["header": "Bearer sk-live-key-9876", "nested": ["k": "shared-secret-0123"]])
        let line = try #require(lines().first)
        #expect(!line.contains("shared-secret-0123"))
        #expect(!line.contains("sk-live-key-9876"))
        #expect(line.contains(SecretRedactor.replacement))
    }

    @Test func jsonEscapesControlCharacters() {
        #expect(LogRecordRenderer.quoted("a\u{01}b\\c") == "\"a\\u0001b\\\\c\"")
    }
}
