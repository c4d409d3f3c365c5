import AppleFormats
import Contracts
import Hummingbird
import Logging
import ServiceLifecycle
import StorekeeperCore

/// In front of every Server API route of one environment: the injected fault
/// of this call if there is one, else the token check (a bare 401, as
/// Apple's), else the route.
struct SimServerAPIGate: RouterMiddleware {
    typealias Context = BasicRequestContext

    let environment: AppleEnvironment
    let simulator: AppStoreSimulator
    let tokens: SimTokenCheck

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let (fault, retryAfter) = simulator.takeServerAPIFault(for: environment) {
            return try await Self.response(to: fault, retryAfterSeconds: retryAfter)
        }
        if let refusal = tokens.refusal(of: request.headers[.authorization]) {
            context.logger.info("Server API token refused", metadata: ["sim.refusal": "\(refusal.rawValue)"])
            return Self.unauthenticated
        }
        return try await next(request, context)
    }

    static let unauthenticated = Response(
        status: .unauthorized, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "Unauthenticated")))

    private static func response(to fault: ServerAPIFaultPlan.Fault, retryAfterSeconds: Int) async throws -> Response {
        switch fault {
        case .rateLimited:
            var response = SimServerAPIReply.error(429, .rateLimitExceeded).response
            response.headers[.retryAfter] = String(retryAfterSeconds)
            return response
        case .unauthorized:
            return unauthenticated
        case .internalError:
            return SimServerAPIReply.error(500, .generalInternal).response
        case .unavailable:
            return Response(status: .serviceUnavailable, body: .init(byteBuffer: ByteBuffer(string: "Service Unavailable")))
        case .hang:
            // Never answers; the caller's time-out ends it. Released at shutdown.
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(3_600)) }
            return Response(status: .serviceUnavailable)
        }
    }
}
