import CZeroMQ
import Testing

@testable import ZeroMQ

/// A service's tasks end with the first failure, not at a shutdown nobody asks for.
@Suite(.timeLimit(.minutes(1))) struct UntilGracefulShutdownTests {
    let context = ZMQContext()

    @Test func aSocketThatCannotBindEndsTheRunWithItsError() async throws {
        // The endpoint is taken by another socket.
        let holder = try ZMQSocket(context: context, type: .pull)
        try holder.bind("tcp://127.0.0.1:*")
        let endpoint = try holder.lastEndpoint()
        let loop = ZMQSocketLoop(context: context, type: .pull) { socket in try socket.bind(endpoint) }
        do {
            try await runUntilGracefulShutdown { group in
                group.addTask { try await loop.run() }
                // A loop beside it that would run forever.
                group.addTask { try await endingQuietlyOnCancellation { _ = try await loop.receive() } }
            }
            Issue.record("the run ended without the bind failure")
        } catch let error as ZMQError {
            #expect(error.code == EADDRINUSE)
        }
        holder.close()
    }

    @Test func cancellingTheRunEndsItQuietly() async throws {
        let loop = ZMQSocketLoop(context: context, type: .pull) { socket in try socket.bind("tcp://127.0.0.1:*") }
        let run = Task {
            try await runUntilGracefulShutdown { group in
                group.addTask { try await loop.run() }
                group.addTask { try await endingQuietlyOnCancellation { _ = try await loop.receive() } }
            }
        }
        run.cancel()
        try await run.value
        await #expect(throws: ZMQSocketLoop.Closed()) { try await loop.receive() }
    }
}
