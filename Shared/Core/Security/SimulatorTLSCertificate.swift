import Foundation

/// The certificate `storekeeper-sim` presents on `STOREKEEPER_SIM_TLS_ADDR`:
/// self-signed, P-256, for `127.0.0.1` and `localhost`, valid 2026 to 2046.
/// Its own trust anchor (CA:TRUE, serverAuth), so a client that names it in
/// `STOREKEEPER_APPLE_CA_FILE` reaches the simulator as it reaches Apple:
/// TLS, then HTTP/2 or HTTP/1.1 by ALPN.
///
/// TEST ONLY. The private key is public; nothing trusts this certificate
/// unless it is named explicitly.
public enum SimulatorTLSCertificate {
    public static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIICJDCCAcqgAwIBAgIUOXDObqmHqzotnwN0hZOUpXkr4RMwCgYIKoZIzj0EAwIw
        RjEUMBIGA1UECgwLU3RvcmVrZWVwZXIxLjAsBgNVBAMMJVN0b3Jla2VlcGVyIFNp
        bXVsYXRvciBUTFMgKFRFU1QgT05MWSkwHhcNMjYxMTI2MTgxNDU1WhcNNDYwMTI1
        MTgxNDU1WjBGMRQwEgYDVQQKDAtTdG9yZWtlZXBlcjEuMCwGA1UEAwwlU3RvcmVr
        ZWVwZXIgU2ltdWxhdG9yIFRMUyAoVEVTVCBPTkxZKTBZMBMGByqGSM49AgEGCCqG
        SM49AwEHA0IABF5Qlwpk/Yso059sp8oTIOG8axty4EcD8/vwE1Oal27daWrgz0+i
        eQcdGGyKyqDrDE0okGe0+2hoLQrVB6UP7/yjgZUwgZIwHQYDVR0OBBYEFMGmy2ix
        gtAlLGCkll1dA6U2Tq+2MB8GA1UdIwQYMBaAFMGmy2ixgtAlLGCkll1dA6U2Tq+2
        MBoGA1UdEQQTMBGHBH8AAAGCCWxvY2FsaG9zdDAPBgNVHRMBAf8EBTADAQH/MA4G
        A1UdDwEB/wQEAwIChDATBgNVHSUEDDAKBggrBgEFBQcDATAKBggqhkjOPQQDAgNI
        ADBFAiEAwhIUgRzH+lQ8KvxxOXIb+3ana4qGnNtJv1wjgF2QroUCIGdRyZX2wpoY
        Ve0PCERfssE7JO0RTfAiUNPiS9D5KXej
        -----END CERTIFICATE-----
        """
    public static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgiPUheSn1/2tc9Yfs
        Yv0KZMASljF8W+lKcH2NsWgUto+hRANCAAReUJcKZP2LKNOfbKfKEyDhvGsbcuBH
        A/P78BNTmpdu3Wlq4M9PonkHHRhsisqg6wxNKJBntPtoaC0K1QelD+/8
        -----END PRIVATE KEY-----
        """

    /// Writes the certificate to a new file in `directory` and returns its
    /// path: what a client names in `STOREKEEPER_APPLE_CA_FILE` to trust it.
    public static func writeCertificate(into directory: String = NSTemporaryDirectory()) throws -> String {
        let path = (directory as NSString).appendingPathComponent("storekeeper-sim-tls-\(UUID().uuidString).pem")
        try certificatePEM.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
