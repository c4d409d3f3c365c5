import AppleFormats
import Foundation

/// One answer of the simulator's Server API: a status and Apple's JSON.
struct SimServerAPIReply: Sendable, Equatable {
    let status: Int
    let body: [UInt8]

    static func json(_ value: some Encodable, status: Int = 200) -> SimServerAPIReply {
        // Apple's shapes are plain structs of strings, numbers and arrays: encoding cannot fail.
        SimServerAPIReply(status: status, body: Array((try? JSONEncoder().encode(value)) ?? Data()))
    }

    /// Apple's error body, e.g. 404 `{"errorCode": 4040010, "errorMessage": "Transaction id not found."}`.
    static func error(_ status: Int, _ code: ServerAPIErrorCode) -> SimServerAPIReply {
        json(ServerAPIErrorBody(code), status: status)
    }

    /// 202 with no body (Send Consumption Information).
    static let accepted = SimServerAPIReply(status: 202, body: [])
}

/// An answer built under the simulator's lock and signed after it (a
/// signature costs more than everything done under the lock): the claims
/// of each JWS it holds, and the answer once they are signed, in order.
struct SimUnsignedReply: Sendable {
    let claims: [Data]
    let assemble: @Sendable (_ signed: [String]) -> SimServerAPIReply

    /// An answer with nothing to sign.
    static func plain(_ reply: SimServerAPIReply) -> SimUnsignedReply {
        SimUnsignedReply(claims: []) { _ in reply }
    }
}
