import BenchmarkSupport
import NIOCore
import NIOPosix
import Testing

@Suite struct HTTPLoadClientTests {
    /// A server at its open-file limit leaves connections in its listen queue: the
    /// kernel completes them, nobody accepts them. Such an exchange must end.
    @Test func anExchangeNobodyAnswersFailsAfterItsTimeout() async throws {
        // A server channel that never reads accepts nothing: connections wait in its queue.
        let listener = try await ServerBootstrap(group: NIOSingletons.posixEventLoopGroup)
            .serverChannelOption(ChannelOptions.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = try #require(listener.localAddress?.port)
        let client = HTTPLoadClient(host: "127.0.0.1", port: port, answerTimeout: .milliseconds(200))
        await #expect(throws: HTTPLoadClient.NoAnswerInTime.self) {
            _ = try await client.send(.POST, "/v1/receipts", json: ByteBuffer(string: "{}"))
        }
        await client.shutdown()
        try await listener.close()
    }
}
