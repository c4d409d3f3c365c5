import Contracts
import Foundation
import Logging
import Synchronization
import Testing
import Timekeeping
import ZeroMQ
import ZeroMQTestSupport

@testable import VerifierPool

#if canImport(Glibc)
import Glibc
#endif

/// Answers of a DNS the test writes: no lookup leaves the process.
final class ScriptedResolver: AddressResolver {
    private let answers = Mutex<[String: Resolution]>([:])

    func set(_ name: String, _ answer: Resolution) { answers.withLock { $0[name] = answer } }

    func resolve(_ host: String) async -> Resolution {
        answers.withLock { $0[host] } ?? .addresses([])
    }
}

/// A verifier's request handler for pool tests: echoes the request id back.
/// A request whose id starts with "hold" is held until its task is cancelled.
final class TestHandler: Sendable {
    private let counts = Mutex((holding: 0, cancelled: 0))

    var holding: Int { counts.withLock { $0.holding } }
    var cancelled: Int { counts.withLock { $0.cancelled } }

    func handle(_ request: Envelope) async -> Envelope {
        if request.requestID.hasPrefix("hold") {
            counts.withLock { $0.holding += 1 }
            try? await Task.sleep(for: .seconds(3_600))
            if Task.isCancelled { counts.withLock { $0.cancelled += 1 } }
        }
        return Envelope(requestID: request.requestID, body: .verifyResult(VerifyResult()))
    }
}

/// A value set by one task and read by another (a worker a factory built).
final class Latest<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)
    func set(_ newValue: Value) { value.withLock { $0 = newValue } }
    var current: Value? { value.withLock { $0 } }
}


let quietLogger = Logger(label: "storekeeper.test", factory: { _ in SwiftLogNoOpLogHandler() })

/// A request envelope whose deadline is `deadline` from now.
func request(_ id: String, deadline: Duration) -> Envelope {
    Envelope(
        requestID: id, deadlineMilliseconds: WallClock.system.deadline(after: deadline), body: .verifyRequest(VerifyRequest()))
}

/// Runs `body` with a pool client running on a port the system picks, and its endpoint.
func withPoolClient(
    context: ZMQContext, deadAfter: Duration = .seconds(3), _ body: (VerifierPoolClient, String) async throws -> Void
) async throws {
    let client = VerifierPoolClient(context: context, endpoint: "tcp://127.0.0.1:*", deadAfter: deadAfter, logger: quietLogger)
    let running = Task { try await client.run() }
    defer { running.cancel() }
    #expect(await eventually { client.endpoint != nil })
    try await body(client, try #require(client.endpoint))
}

/// The next message of `command` the router gets (others skipped): the worker's identity and the body.
func next(_ command: PoolCommand, on router: ZMQSocket) async -> (worker: [UInt8], body: [[UInt8]])? {
    let deadline = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < deadline {
        guard let message = try? router.receive(dontWait: true) else {
            try? await Task.sleep(for: .milliseconds(5))
            continue
        }
        if let (received, body) = PoolFrame.decode(message.dropFirst()), received == command {
            return (message[0], body)
        }
    }
    return nil
}
