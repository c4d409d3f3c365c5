import CCurl
import Timekeeping

extension Transfer {
    /// Sets every option of the easy handle for `request`. Returns `false` when
    /// curl refuses one (the request then fails as `.invalidRequest`).
    ///
    /// Set explicitly even where they are curl's defaults, so a libcurl built
    /// or configured otherwise cannot weaken them: TLS peer and host
    /// verification on, no signals (the loop runs on a thread of a
    /// multi-threaded process), only http and https.
    func configure(
        for request: HTTPRequest, connectTimeout: Duration, totalTimeout: Duration, userAgent: String,
        caFile: String?
    ) -> Bool {
        var failures = 0
        func check(_ code: CURLcode) { if code != CURLE_OK { failures += 1 } }

        check(ccurl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, opaque))
        check(request.url.withCString { ccurl_easy_setopt_string(easy, CURLOPT_URL, $0) })
        check("http,https".withCString { ccurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, $0) })
        check(ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
        check(ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
        check(ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connectTimeout.curlMilliseconds))
        check(ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, totalTimeout.curlMilliseconds))
        check(ccurl_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBodyBytes)))
        check(userAgent.withCString { ccurl_easy_setopt_string(easy, CURLOPT_USERAGENT, $0) })
        if let caFile {
            check(caFile.withCString { ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, $0) })
            // Debian's libcurl also trusts the directory it was built with (/etc/ssl/certs): without
            // this the file would add to the system's certificates instead of replacing them.
            check(ccurl_easy_setopt_pointer(easy, CURLOPT_CAPATH, nil))
        }
        // No CURLOPT_PIPEWAIT, although it would have a burst of https calls wait for the first
        // connection's handshake and share it over HTTP/2: libcurl 7.88.1 never times out a call
        // waiting that way (fixed in 8.8.0), so a stalled handshake with Apple would hold calls past
        // their time-out. Calls started once an HTTP/2 connection is up share it (100 streams each).
        check(ccurl_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, transferWriteBody))
        check(ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, opaque))
        check(ccurl_easy_setopt_write_function(easy, CURLOPT_HEADERFUNCTION, transferWriteHeader))
        check(ccurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, opaque))

        for (name, value) in request.headers { addRequestHeader(name: name, value: value) }
        switch request.method {
        case .get:
            check(ccurl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1))
        case .post, .put:
            // Without this curl sends `Expect: 100-continue` for bodies over
            // 1 KiB and waits up to a second for a `100` that many servers
            // never send; receipts are larger than that. Removed, not sent
            // empty: an `Expect:` of any value is answered 417 by servers and
            // proxies that follow RFC 9110 (Node's among them).
            removeRequestHeader(name: "Expect")
            check(ccurl_easy_setopt_long(easy, CURLOPT_POST, 1))
            // The size first: COPYPOSTFIELDS copies that many bytes, so bodies
            // with NUL bytes survive, and the copy outlives Swift's buffer.
            check(ccurl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
            if request.body.isEmpty {
                check("".withCString { ccurl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, $0) })
            } else {
                check(request.body.withUnsafeBytes { ccurl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) })
            }
            // A PUT is a POST's body under another method name (curl copies the string).
            if request.method == .put { check("PUT".withCString { ccurl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, $0) }) }
        }
        check(ccurl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, requestHeaders))
        return failures == 0
    }
}

/// `CURLOPT_WRITEFUNCTION`. A plain function, so it captures nothing; the
/// transfer comes back from the user-data pointer. Returning less than given
/// makes curl abort with `CURLE_WRITE_ERROR`.
private func transferWriteBody(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userData: UnsafeMutableRawPointer?
) -> Int {
    guard let userData else { return 0 }
    let length = size * count
    return Transfer.from(userData).receiveBody(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
}

/// `CURLOPT_HEADERFUNCTION`: one header line per call.
private func transferWriteHeader(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ userData: UnsafeMutableRawPointer?
) -> Int {
    guard let userData else { return 0 }
    let length = size * count
    return Transfer.from(userData).receiveHeader(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
}

extension Duration {
    /// Whole milliseconds for a curl time-out, rounded up and at least 1:
    /// curl reads 0 as "no time-out".
    var curlMilliseconds: Int {
        // ~24 days: "no time-out" for practical purposes.
        guard components.seconds < Int64(Int32.max) / 1_000 else { return Int(Int32.max) }
        return Int(max(1, millisecondsRoundedUp))
    }
}
