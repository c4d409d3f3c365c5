import CCurl

extension HTTPClientError {
    /// The one table from libcurl's result codes to the client's errors.
    ///
    /// `CURLE_WRITE_ERROR` is `responseTooLarge` only when the client's own
    /// write callback refused the data because of the cap (`capExceeded`);
    /// otherwise it is a plain transport error. A connect time-out comes back
    /// from curl as `CURLE_OPERATION_TIMEDOUT` and so is `timedOut`.
    init(curlCode: CURLcode, capExceeded: Bool) {
        if capExceeded {
            self = .responseTooLarge
            return
        }
        switch curlCode {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            self = .connectFailed
        case CURLE_OPERATION_TIMEDOUT:
            self = .timedOut
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
            CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            self = .tlsFailure
        case CURLE_FILESIZE_EXCEEDED:
            self = .responseTooLarge
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            self = .invalidRequest
        default:
            self = .transport(curlCode: Int(curlCode.rawValue))
        }
    }
}
