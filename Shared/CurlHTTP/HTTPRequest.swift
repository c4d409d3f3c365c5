/// The HTTP methods the client sends: reads (GET), receipts and queries
/// (POST), and the App Store Server API's updates (PUT); a closed set keeps
/// the easy-handle set-up exhaustive.
public enum HTTPMethod: String, Sendable, Hashable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
}

/// One HTTP exchange to perform. A value: it crosses from the caller's task
/// to the curl loop's thread unchanged.
///
/// Redirects are not followed (Apple's endpoints do not redirect, and a
/// followed redirect could carry the body to another host).
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// Absolute `http://` or `https://` URL. Never logged: query strings may carry secrets.
    public var url: String
    /// Sent in this order; duplicates are kept. Never logged.
    public var headers: [(name: String, value: String)]
    /// Sent as-is for POST and PUT (binary-safe); ignored for GET.
    public var body: [UInt8]
    /// Time allowed to establish the connection (TCP and TLS); `nil` takes the client's default.
    public var connectTimeout: Duration?
    /// Time allowed for the whole exchange, counted from `execute`: time spent
    /// queued inside the client is deducted when the transfer starts (one
    /// that waited longer fails then with `.timedOut`; a caller that needs a
    /// hard deadline while queued cancels its task). `nil` takes the client's default.
    public var totalTimeout: Duration?
    /// Largest response body accepted; a longer one fails with
    /// `.responseTooLarge`. `nil` takes the client's default.
    public var maxResponseBytes: Int?

    public init(
        method: HTTPMethod,
        url: String,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        connectTimeout: Duration? = nil,
        totalTimeout: Duration? = nil,
        maxResponseBytes: Int? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxResponseBytes = maxResponseBytes
    }
}

extension HTTPRequest {
    /// True when the request can be handed to curl without it misreading it:
    /// no control characters (a CR or LF in a header would inject headers, a
    /// NUL would silently cut the C string), a header name that is a token,
    /// an http(s) URL and a positive size cap. (Time-outs are checked by
    /// `hasTimeLeft`: none left is a time-out, not a malformed request.)
    /// Scheme and authority (`https://buy.itunes.apple.com`): what curl's
    /// per-host connection cap counts by, give or take a default port.
    /// Read as UTF-8 bytes: every start asks it, and walking Characters (grapheme
    /// breaking) cost about 8,000 instructions a call (callgrind).
    var origin: Substring {
        let utf8 = url.utf8
        let schemeLength = url.hasPrefix("https://") ? 8 : url.hasPrefix("http://") ? 7 : 0
        let authority = utf8.index(utf8.startIndex, offsetBy: schemeLength)
        let end = utf8[authority...].firstIndex { byte in
            byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
        }
        return url[..<(end ?? url.endIndex)]
    }

    var isWellFormed: Bool {
        guard url.hasPrefix("http://") || url.hasPrefix("https://"),
            !url.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
        else { return false }
        for (name, value) in headers {
            guard !name.isEmpty, name.unicodeScalars.allSatisfy(Self.isTokenCharacter),
                !value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F })
            else { return false }
        }
        if let maxResponseBytes, maxResponseBytes <= 0 { return false }
        return true
    }

    /// False when a time-out is zero or negative, as a caller's remaining
    /// deadline (`min(attemptTimeout, timeLeft)`) becomes once it has passed.
    var hasTimeLeft: Bool {
        (connectTimeout ?? .seconds(1)) > .zero && (totalTimeout ?? .seconds(1)) > .zero
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": true
        case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~": true
        default: false
        }
    }
}
