import CCurl

/// libcurl's process-wide initialisation, done exactly once.
///
/// `curl_global_init` must run before any other curl call and must not run
/// twice at the same time; a `static let` is initialised lazily and exactly
/// once even when several threads reach it together. There is no matching
/// `curl_global_cleanup`: clients may live until the process ends, and the
/// operating system reclaims what curl holds.
enum CurlGlobal {
    private static let initCode: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Runs the initialisation (the first time) and tells whether it succeeded.
    static var isInitialized: Bool { initCode == CURLE_OK }

    /// libcurl's version string, e.g. `libcurl/7.88.1 OpenSSL/3.0.x ...`, for the start-up log.
    static var version: String { String(cString: curl_version()) }
}
