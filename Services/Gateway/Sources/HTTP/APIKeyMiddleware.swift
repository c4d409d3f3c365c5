import Crypto
import HTTPTypes
import Hummingbird
import StorekeeperCore

/// `STOREKEEPER_API_KEYS`: when set, a caller must present one of them as
/// `Authorization: Bearer KEY`. Keys are compared as SHA-256 digests in
/// constant time, so neither the key's length nor its first differing byte
/// shows in the timing.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    private let digests: [[UInt8]]

    init(keys: [Secret]) {
        digests = keys.map { Array(SHA256.hash(data: Array($0.revealed.utf8))) }
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard !digests.isEmpty else { return try await next(request, context) }
        guard let index = Self.match(request.headers[.authorization], digests) else { throw APIError.unauthorized }
        var context = context
        context.apiKeyIndex = index
        context.apiKeyScope = Hex.lowercase(digests[index])
        return try await next(request, context)
    }

    /// The index of the key the header carries; every key is compared, whatever matches.
    static func match(_ header: String?, _ digests: [[UInt8]]) -> Int? {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        let presented = Array(SHA256.hash(data: Array(header.dropFirst(7).utf8)))
        var found: Int?
        for (index, digest) in digests.enumerated() where ConstantTime.equal(presented, digest) && found == nil {
            found = index
        }
        return found
    }
}
