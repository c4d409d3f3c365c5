import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StorekeeperCore

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-Id")!
}

/// Gives every request an id (the caller's `X-Request-Id` when it is sane,
/// otherwise a new one), puts it in every log line and echoes it on every
/// answer (errors become answers below it, in `APIErrorMiddleware`).
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let requestID = Self.sanitized(request.headers[.requestID]) ?? Hex.lowercase(RandomUUIDs.shared.next())
        context.requestID = requestID
        context.logger[metadataKey: "request.id"] = "\(requestID)"
        var response = try await next(request, context)
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
}
