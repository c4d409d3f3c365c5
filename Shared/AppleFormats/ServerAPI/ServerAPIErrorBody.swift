/// The body of every App Store Server API error answer (Apple: ErrorPayload),
/// e.g. `{"errorCode": 4040010, "errorMessage": "Transaction id not found."}`.
public struct ServerAPIErrorBody: Codable, Sendable, Equatable {
    public var errorCode: Int64?
    public var errorMessage: String?

    public init(errorCode: Int64?, errorMessage: String?) {
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }

    public init(_ code: ServerAPIErrorCode) {
        self.init(errorCode: code.rawValue, errorMessage: code.message)
    }
}
