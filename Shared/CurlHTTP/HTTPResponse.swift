/// What the server answered. Any status (4xx and 5xx included) is a response,
/// not an error: what a status means is the caller's protocol, not HTTP's.
public struct HTTPResponse: Sendable {
    public var status: Int
    /// The final response's header fields in the order received (interim
    /// `100 Continue` headers are dropped), names as the server spelled them.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// The HTTP version the answer came in; nil when curl does not say.
    public var version: Version?

    /// The versions curl speaks (1.0 and 1.1 are one here).
    public enum Version: Sendable, Equatable {
        case http1, http2, http3
    }

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = [], version: Version? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.version = version
    }

    /// The first value of the header `name`, compared case-insensitively
    /// (HTTP field names are case-insensitive), e.g. `header("Retry-After")`.
    public func header(_ name: String) -> String? {
        headers.first(where: { Self.sameName($0.name, name) })?.value
    }

    /// Every value of the header `name`, in order, compared case-insensitively.
    public func headers(named name: String) -> [String] {
        headers.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    private static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
    }
}
