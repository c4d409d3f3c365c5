import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Testing

/// storekeeper-sim as a process, driven through the `storekeeper sim` CLI,
/// sending version 1 server notifications to a receiver in the test.
@Suite(.serialized) struct SimulatorNotificationTests {
    /// Collects what the simulator posts.
    final class Receiver: Sendable {
        /// Raw bodies: `Any` does not go under a lock; parsed when read.
        let bodies = Mutex<[Data]>([])
        let port = Mutex<Int?>(nil)

        func received(type: String) -> [[String: Any]] {
            bodies.withLock { $0 }
                .compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
                .filter { $0["notification_type"] as? String == type }
        }

        func wait(for type: String, count: Int) async throws -> [[String: Any]] {
            for _ in 0..<300 {
                let found = received(type: type)
                if found.count >= count { return found }
                try await Task.sleep(for: .milliseconds(50))
            }
            return received(type: type)
        }
    }

    func cli(_ arguments: [String]) async throws -> [String: Any] {
        let child = try ChildProcess("storekeeper", arguments: ["sim"] + arguments)
        let status = await child.waitForOwnExit()
        #expect(status == 0, "storekeeper sim \(arguments): \(child.captured)")
        let line = child.captured.split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    @Test func renewalsRefundsAndRenewalStatusChangesAreNotified() async throws {
        let receiver = Receiver()
        let router = Router()
        router.post("/apple") { request, _ -> HTTPResponse.Status in
            let body = Data(buffer: try await request.body.collect(upTo: 1_048_576))
            receiver.bodies.withLock { $0.append(body) }
            return .ok
        }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in receiver.port.withLock { $0 = channel.localAddress?.port } },
            logger: Logger(label: "receiver"))
        let server = Task { try await app.runService(gracefulShutdownSignals: []) }
        defer { server.cancel() }
        var port: Int?
        for _ in 0..<200 where port == nil {
            port = receiver.port.withLock { $0 }
            if port == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let receiverPort = try #require(port)

        let simulator = try await SimulatorProcess(
            extraEnvironment: ["STOREKEEPER_SIM_NOTIFICATION_URL": "http://127.0.0.1:\(receiverPort)/apple"])
        let target = ["--sim-url", simulator.base]
        do {
            let purchase = try await cli(
                ["purchase", "--product", "com.example.pro.monthly", "--type", "auto_renewable", "--environment", "sandbox", "--json"]
                    + target)
            let originalID = try #require(purchase["original_transaction_id"] as? String)
            #expect((purchase["receipt_data"] as? String)?.isEmpty == false)

            // 12 sandbox minutes: two 5-minute renewals.
            _ = try await cli(["clock", "--minutes", "12"] + target)
            let renewals = try await receiver.wait(for: "DID_RENEW", count: 2)
            #expect(renewals.count == 2)
            let last = try #require(renewals.last)
            #expect(last["password"] as? String == SimulatorProcess.secret)
            #expect(last["environment"] as? String == "Sandbox")
            #expect(last["original_transaction_id"] as? String == originalID)
            let unified = try #require(last["unified_receipt"] as? [String: Any])
            #expect((unified["latest_receipt_info"] as? [[String: Any]])?.count == 3)
            #expect((unified["latest_receipt"] as? String)?.isEmpty == false)

            _ = try await cli(["auto-renew", originalID, "--disable-renew"] + target)
            let statusChanges = try await receiver.wait(for: "DID_CHANGE_RENEWAL_STATUS", count: 1)
            #expect(statusChanges.first?["auto_renew_status"] as? String == "false")

            _ = try await cli(["refund", originalID] + target)
            let refunds = try await receiver.wait(for: "REFUND", count: 1)
            let refunded = (refunds.first?["unified_receipt"] as? [String: Any])?["latest_receipt_info"] as? [[String: Any]]
            #expect(refunded?.contains { $0["transaction_id"] as? String == originalID && $0["cancellation_date_ms"] != nil } == true)
        } catch {
            await simulator.stop()
            throw error
        }
        #expect(await simulator.stop() == 0)
    }
}
