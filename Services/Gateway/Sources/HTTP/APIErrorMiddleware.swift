import Hummingbird
import Logging

/// Turns every error thrown below it into the contract's JSON error: an
/// `APIError` as it is, Hummingbird's `HTTPError` by its status, anything else
/// (logged by type only: a description may carry data) as `service_unavailable`.
struct APIErrorMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return error.response()
        } catch let error as HTTPError {
            return APIError(error).response()
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(type(of: error))"])
            return APIError.unavailable.response()
        }
    }
}
