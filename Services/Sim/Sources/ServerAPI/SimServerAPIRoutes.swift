import AppleFormats
import Contracts
import Hummingbird

/// The simulator's App Store Server API: Apple's paths under
/// `/production` and `/sandbox` (the two base URLs), each behind the gate
/// (faults, then the token check).
enum SimServerAPIRoutes {
    static func add(
        to router: Router<BasicRequestContext>, simulator: AppStoreSimulator, notifier: SimNotifier, tokens: SimTokenCheck
    ) {
        for environment in [AppleEnvironment.production, .sandbox] {
            let api = router.group(RouterPath(environment == .sandbox ? "sandbox" : "production"))
                .add(middleware: SimServerAPIGate(environment: environment, simulator: simulator, tokens: tokens))
            func read(_ path: String, _ query: @escaping @Sendable (String, Request) -> SimServerAPIQuery) {
                api.get(RouterPath(route(path, ":id"))) { request, context in
                    simulator.serverAPI(query(try context.parameters.require("id"), request), at: environment).response
                }
            }
            read(ServerAPIPath.transactionInfo) { id, _ in .transactionInfo(id) }
            read(ServerAPIPath.transactionHistory) { id, request in
                .transactionHistory(id, revision: request.uri.queryParameters.get("revision"))
            }
            read(ServerAPIPath.refundHistory) { id, request in
                .refundHistory(id, revision: request.uri.queryParameters.get("revision"))
            }
            read(ServerAPIPath.subscriptionStatuses) { id, _ in .subscriptionStatuses(id) }
            read(ServerAPIPath.orderLookup) { id, _ in .orderLookup(id) }
            api.post(RouterPath(route(ServerAPIPath.notificationHistory))) { request, context in
                let body = try await request.decode(as: NotificationHistoryRequest.self, context: context)
                let token = request.uri.queryParameters.get("paginationToken")
                return simulator.notificationHistory(body, paginationToken: token, at: environment).response
            }
            api.post(RouterPath(route(ServerAPIPath.testNotification))) { _, _ in
                let record = simulator.requestTestNotification(at: environment)
                await notifier.deliver(record)
                return SimServerAPIReply.json(SendTestNotificationResponse(testNotificationToken: record.testToken)).response
            }
            api.get(RouterPath(route(ServerAPIPath.testNotification, ":token"))) { _, context in
                simulator.testNotificationStatus(try context.parameters.require("token"), at: environment).response
            }
            api.put(RouterPath(route(ServerAPIPath.extendRenewalDate, ":id"))) { request, context in
                let body = try await request.decode(as: ExtendRenewalDateRequest.self, context: context)
                let (reply, notifications) = simulator.extendRenewalDate(
                    try context.parameters.require("id"), body, at: environment)
                await notifier.deliver(notifications)
                return reply.response
            }
            api.put(RouterPath(route(ServerAPIPath.consumption, ":id"))) { request, context in
                let body = try await request.decode(as: ConsumptionRequest.self, context: context)
                return simulator.recordConsumption(try context.parameters.require("id"), body, at: environment).response
            }
        }
        SimRouter.faultsRoute(router, "/admin/server-api/faults/:environment") { (plan: ServerAPIFaultPlan, environment) in
            simulator.setServerAPIFaults(plan, for: environment)
        }
    }

    /// Apple's path (without its leading slash: the group adds the environment) and a parameter segment.
    private static func route(_ path: String, _ parameter: String? = nil) -> String {
        String(path.dropFirst()) + (parameter.map { "/" + $0 } ?? "")
    }
}

extension SimServerAPIReply {
    var response: Response {
        Response(
            status: .init(code: status), headers: body.isEmpty ? [:] : [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
