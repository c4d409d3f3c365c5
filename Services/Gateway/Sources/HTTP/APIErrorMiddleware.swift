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
        } catch {
            return Self.response(to: error, logger: context.logger)
        }
    }

    /// Out of line: inlined, its values would sit in this middleware's async
    /// frame, which every request in flight holds (bench/JOURNAL.md, "2026-11-28").
    @inline(never)
    static func response(to error: any Error, logger: Logger) -> Response {
        switch error {
        case let error as APIError:
            return error.response()
        case let error as HTTPError:
            return APIError(error).response()
        default:
            logger.error("request failed", metadata: ["error": "\(type(of: error))"])
            return APIError.unavailable.response()
        }
    }
}
