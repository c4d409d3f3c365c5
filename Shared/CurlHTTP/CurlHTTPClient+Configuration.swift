extension CurlHTTPClient {
    /// How the client uses libcurl. Read once, at `init`.
    public struct Configuration: Sendable {
        /// Transfers curl runs at once (easy handles in the multi handle).
        /// Requests beyond it wait in a first-in first-out queue inside the
        /// client, where their total time-out already runs. Default 1024.
        public var maxConcurrentTransfers: Int
        /// Open connections to one host (`CURLMOPT_MAX_HOST_CONNECTIONS`); a
        /// transfer that would need one more waits inside curl for a free one
        /// (HTTP/2 multiplexes transfers over the ones it has). Also sizes
        /// the idle connection cache (`CURLMOPT_MAXCONNECTS`). Split evenly
        /// over the client's multi handles (one per 256, at most 16; see
        /// `MultiShard`), so together they hold exactly it. Default 1024.
        public var maxConnectionsPerHost: Int
        /// Connect time-out (TCP and TLS) of a request that sets none. Default 5 s.
        public var connectTimeout: Duration
        /// Total time-out of a request that sets none. Default 15 s.
        public var totalTimeout: Duration
        /// Largest response body of a request that sets none. Default 1 MiB.
        public var maxResponseBytes: Int
        /// `User-Agent` sent unless a request sets its own.
        public var userAgent: String
        /// A PEM file of the certificates trusted for `https://` instead of
        /// the system's (`CURLOPT_CAINFO`, with `CURLOPT_CAPATH` cleared); nil
        /// for the system's. For test servers with a certificate of their own,
        /// such as storekeeper-sim's.
        public var caFile: String?

        public init(
            maxConcurrentTransfers: Int = 1024,
            maxConnectionsPerHost: Int = 1024,
            connectTimeout: Duration = .seconds(5),
            totalTimeout: Duration = .seconds(15),
            maxResponseBytes: Int = 1 << 20,
            userAgent: String = "storekeeper",
            caFile: String? = nil
        ) {
            self.maxConcurrentTransfers = maxConcurrentTransfers
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.connectTimeout = connectTimeout
            self.totalTimeout = totalTimeout
            self.maxResponseBytes = maxResponseBytes
            self.userAgent = userAgent
            self.caFile = caFile
        }

        /// Stops on values that would make the client misbehave; these come
        /// from code, not from operators (the service validates its
        /// environment before building a configuration).
        func validate() {
            precondition(maxConcurrentTransfers > 0, "CurlHTTPClient.Configuration.maxConcurrentTransfers must be > 0")
            precondition(maxConnectionsPerHost > 0, "CurlHTTPClient.Configuration.maxConnectionsPerHost must be > 0")
            precondition(connectTimeout > .zero, "CurlHTTPClient.Configuration.connectTimeout must be > 0")
            precondition(totalTimeout > .zero, "CurlHTTPClient.Configuration.totalTimeout must be > 0")
            precondition(maxResponseBytes > 0, "CurlHTTPClient.Configuration.maxResponseBytes must be > 0")
            precondition(
                !userAgent.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
                "CurlHTTPClient.Configuration.userAgent must not hold control characters")
        }
    }
}
