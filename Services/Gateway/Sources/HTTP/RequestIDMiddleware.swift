import Foundation
import HTTPTypes
import Hummingbird
import Logging

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-Id")!
}

/// Gives every request an id (the caller's `X-Request-Id` when it is sane,
/// otherwise a new one), puts it in every log line, echoes it on every answer,
/// and turns every error into the contract's JSON error.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let requestID = Self.sanitized(request.headers[.requestID]) ?? UUID().uuidString.lowercased()
        context.requestID = requestID
        context.logger[metadataKey: "request.id"] = "\(requestID)"
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIError {
            response = error.response()
        } catch let error as HTTPError {
            response = Self.apiError(error).response()
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(type(of: error))"])
            response = APIError.unavailable.response()
        }
        response.headers[.requestID] = requestID
        return response
    }

    /// An id a client chose, if it is 1-128 visible ASCII characters (it goes into logs).
    static func sanitized(_ value: String?) -> String? {
        guard let value, (1...128).contains(value.utf8.count),
            value.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return nil }
        return value
    }

    static func apiError(_ error: HTTPError) -> APIError {
        switch error.status {
        case .contentTooLarge: .payloadTooLarge
        case .notFound: .notFound
        case .methodNotAllowed: APIError(status: .methodNotAllowed, code: "method_not_allowed", message: "method not allowed")
        default: .badRequest("the request could not be read")
        }
    }
}
