import Foundation
import Hummingbird

/// The admin routes about notifications and refund requests: losing
/// deliveries (for the ledger's notification catch-up), a customer's refund
/// request (CONSUMPTION_REQUEST), and what the app answered it with (Send
/// Consumption Information, as Apple keeps it).
enum SimNotificationAdminRoutes {
    static func add(to router: Router<BasicRequestContext>, simulator: AppStoreSimulator, notifier: SimNotifier) {
        // `{"drop": true}`: every notification is made and kept in the history, and never delivered.
        router.post("/admin/notifications/faults") { request, context in
            let faults = try await request.decode(as: NotificationFaults.self, context: context)
            simulator.dropsNotifications.store(faults.drop, ordering: .relaxed)
            return SimRouter.json(["drop": faults.drop])
        }
        router.post("/admin/consumption-requests") { request, context in
            let asked = try await request.decode(as: ConsumptionRequestRequest.self, context: context)
            do {
                await notifier.deliver([try simulator.consumptionRequest(transactionID: asked.transactionID)])
            } catch {
                throw HTTPError(.notFound, message: "unknown transaction")
            }
            return SimRouter.json(["transaction_id": asked.transactionID, "notification_type": "CONSUMPTION_REQUEST"])
        }
        // Apple's JSON body, as it arrived.
        router.get("/admin/consumption/:transaction_id") { _, context in
            guard let id = context.parameters.get("transaction_id"), let received = simulator.consumptionInformation(id)
            else { throw HTTPError(.notFound, message: "no consumption information about that transaction") }
            let body = try JSONEncoder().encode(received)
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: body)))
        }
    }
}

struct NotificationFaults: Decodable {
    var drop: Bool
}

struct ConsumptionRequestRequest: Decodable {
    var transactionID: String
    enum CodingKeys: String, CodingKey { case transactionID = "transaction_id" }
}
