import Contracts
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import StorekeeperCore

/// The simulator's HTTP API: Apple's two verifyReceipt endpoints, the App
/// Store Server API under `/production` and `/sandbox` (SimServerAPIRoutes),
/// and the admin endpoints that mint purchases and drive time, refunds,
/// renewal status and faults.
enum SimRouter {
    static let maxBodyBytes = 1_048_576

    /// `tokens`: how the Server API checks bearer tokens (the simulator's test key unless a test brings its own).
    static func make(
        simulator: AppStoreSimulator, notifier: SimNotifier, tokens: SimTokenCheck? = nil
    ) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/healthz") { _, _ in "ok" }
        SimServerAPIRoutes.add(
            to: router, simulator: simulator, notifier: notifier,
            tokens: tokens ?? .simulator(bundleID: simulator.bundleID))
        for (path, environment) in [
            ("/production/verifyReceipt", AppleEnvironment.production), ("/verifyReceipt", .production),
            ("/sandbox/verifyReceipt", .sandbox),
        ] {
            router.post(RouterPath(path)) { request, _ in
                try await verify(request, at: environment, simulator: simulator, notifier: notifier)
            }
        }
        router.post("/admin/purchases") { request, context in
            let purchase = try await request.decode(as: PurchaseRequest.self, context: context)
            do {
                let made = try simulator.purchase(purchase)
                return json([
                    "receipt_data": made.receiptData, "transaction_id": made.transactionID,
                    "signed_transaction": simulator.signedTransaction(made.transactionID) ?? NSNull(),
                    "original_transaction_id": made.originalTransactionID, "order_id": made.orderID,
                    "expires_date_ms": made.expiresMs.map(String.init) ?? NSNull(),
                ])
            } catch {
                throw HTTPError(.conflict, message: "already owned: a non-consumable is bought once")
            }
        }
        // StoreKit 2: the JWS the app would get for any transaction (a renewal, say, from Transaction.updates).
        router.get("/admin/transactions/:transaction_id/signed") { _, context in
            guard let id = context.parameters.get("transaction_id"), let signed = simulator.signedTransaction(id) else {
                throw HTTPError(.notFound, message: "unknown transaction")
            }
            return json(["signed_transaction": signed])
        }
        router.post("/admin/refunds") { request, context in
            let refund = try await request.decode(as: RefundRequest.self, context: context)
            do {
                let notification = try simulator.refund(transactionID: refund.transactionID, reason: refund.reason ?? 0)
                await notifier.deliver([notification])
                return json(["refunded": refund.transactionID])
            } catch {
                throw HTTPError(.notFound, message: "unknown transaction")
            }
        }
        router.post("/admin/auto-renew") { request, context in
            let change = try await request.decode(as: AutoRenewRequest.self, context: context)
            do {
                let notification = try simulator.setAutoRenew(
                    originalTransactionID: change.originalTransactionID, enabled: change.enabled)
                await notifier.deliver(notification.map { [$0] } ?? [])
                return json(["original_transaction_id": change.originalTransactionID, "auto_renew": change.enabled])
            } catch {
                throw HTTPError(.notFound, message: "unknown subscription")
            }
        }
        router.post("/admin/plan-changes") { request, context in
            let change = try await request.decode(as: PlanChangeRequest.self, context: context)
            let made: (notification: SimNotification, transactionID: String?)
            do throws(SimStore.Failure) {
                made = try simulator.changePlan(change)
            } catch .unknownSubscription {
                throw HTTPError(.notFound, message: "unknown subscription")
            } catch .levelMismatch {
                throw HTTPError(.unprocessableContent, message: "the levels contradict a \(change.kind.rawValue)")
            } catch {
                throw HTTPError(
                    .conflict, message: "the subscription is not active, or already on that plan with nothing queued")
            }
            await notifier.deliver([made.notification])
            let subtype = made.notification.subtype
            var answer: [String: Any] = [
                "original_transaction_id": change.originalTransactionID, "product_id": change.productID,
                "kind": change.kind.rawValue,
                "takes_effect": subtype == "UPGRADE" ? "now" : subtype == "DOWNGRADE" ? "next_renewal" : "cancelled",
                "now_ms": simulator.now,
            ]
            if let id = made.transactionID { answer["transaction_id"] = id }
            return json(answer)
        }
        router.post("/admin/clock") { request, context in
            let advance = try await request.decode(as: ClockRequest.self, context: context)
            guard advance.advanceMs >= 0 else { throw HTTPError(.badRequest, message: "advance_ms must not be negative") }
            let notifications = simulator.advanceClock(byMilliseconds: advance.advanceMs)
            await notifier.deliver(notifications)
            return json(["now_ms": simulator.now, "renewals": notifications.filter { $0.type == "DID_RENEW" }.count])
        }
        router.post("/admin/renew") { request, context in
            let renewal = try await request.decode(as: RenewRequest.self, context: context)
            do {
                let (notifications, expires) = try simulator.renewNow(originalTransactionID: renewal.originalTransactionID)
                await notifier.deliver(notifications)
                return json([
                    "original_transaction_id": renewal.originalTransactionID,
                    "renewals": notifications.filter { $0.type == "DID_RENEW" }.count,
                    "transaction_ids": notifications.filter { $0.type == "DID_RENEW" }.compactMap(\.transactionID),
                    "expires_date_ms": String(expires), "now_ms": simulator.now,
                ])
            } catch {
                throw HTTPError(.notFound, message: "unknown subscription")
            }
        }
        faultsRoute(router, "/admin/faults/:environment") { (plan: FaultPlan, environment) in
            simulator.setFaults(plan, for: environment)
        }
        SimNotificationAdminRoutes.add(to: router, simulator: simulator, notifier: notifier)
        return router
    }

    /// `POST path` (with `:environment`): a fault plan for that environment,
    /// checked (a bad one is a 400 naming the field), then handed to `set`.
    static func faultsRoute<Plan: SimFaultPlan>(
        _ router: Router<BasicRequestContext>, _ path: RouterPath, set: @escaping @Sendable (Plan, AppleEnvironment) -> Void
    ) {
        router.post(path) { request, context in
            let name = context.parameters.get("environment") ?? ""
            guard let environment = PurchaseRequest.Environment(rawValue: name) else {
                throw HTTPError(.notFound, message: "environment is production or sandbox")
            }
            let plan = try await request.decode(as: Plan.self, context: context)
            do throws(FaultPlanError) {
                set(try plan.validated(), environment.appleEnvironment)
            } catch {
                throw HTTPError(.badRequest, message: error.message)
            }
            return json(["environment": name])
        }
    }

    private static func verify(
        _ request: Request, at environment: AppleEnvironment, simulator: AppStoreSimulator, notifier: SimNotifier
    ) async throws -> Response {
        let body = try await request.body.collect(upTo: maxBodyBytes)
        let plan = simulator.faults(for: environment)
        let latency = plan.latency(unit: Double.random(in: 0..<1))
        if latency > .zero { try await EventLoopExecutor.sleep(for: latency) }
        let fault = plan.fault(unit: Double.random(in: 0..<1))
        switch fault {
        case .hang:
            // Never answers; the caller's time-out ends it. Released at shutdown.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(3_600)) }
            return Response(status: .serviceUnavailable)
        case .http503:
            return Response(status: .serviceUnavailable, body: .init(byteBuffer: ByteBuffer(string: "Service Unavailable")))
        case .status21005, .status21199:
            return json([
                "status": fault == .status21005 ? 21005 : 21199, "environment": SimVerifyResponder.name(environment),
                "is-retryable": true,
            ])
        case .garbage:
            // What a proxy in front of Apple answers: a page, not JSON.
            return Response(
                status: .ok, headers: [.contentType: "text/html"],
                body: .init(byteBuffer: ByteBuffer(string: "<html><body><h1>502 Bad Gateway</h1></body></html>")))
        case .huge:
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: hugeAnswer))
        case .truncated, .wrongBundle, nil:
            let (answer, notifications) = simulator.verify(Array(buffer: body), at: environment)
            await notifier.deliver(notifications)
            var bytes = ByteBuffer(data: answer)
            if fault == .truncated {
                bytes = bytes.getSlice(at: 0, length: bytes.readableBytes / 2) ?? ByteBuffer()
            } else if fault == .wrongBundle {
                let text = String(buffer: bytes).replacingOccurrences(
                    of: "\"\(simulator.bundleID)\"", with: "\"com.example.someone-else\"")
                bytes = ByteBuffer(string: text)
            }
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: bytes))
        }
    }

    /// A 50 MiB verifyReceipt answer (valid JSON, absurd size), built once.
    private static let hugeAnswer: ByteBuffer = {
        var buffer = ByteBuffer(string: #"{"status": 0, "padding": ""#)
        buffer.writeRepeatingByte(UInt8(ascii: "x"), count: 50 * 1_048_576)
        buffer.writeString(#""}"#)
        return buffer
    }()

    static func json(_ object: [String: Any]) -> Response {
        let data = SimJSONWriter.data(object)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: data)))
    }
}

struct RefundRequest: Decodable {
    var transactionID: String
    var reason: Int?
    enum CodingKeys: String, CodingKey { case transactionID = "transaction_id", reason }
}

struct AutoRenewRequest: Decodable {
    var originalTransactionID: String
    var enabled: Bool
    enum CodingKeys: String, CodingKey { case originalTransactionID = "original_transaction_id", enabled }
}

struct RenewRequest: Decodable {
    var originalTransactionID: String
    enum CodingKeys: String, CodingKey { case originalTransactionID = "original_transaction_id" }
}

struct ClockRequest: Decodable {
    var advanceMs: Int64
    enum CodingKeys: String, CodingKey { case advanceMs = "advance_ms" }
}
