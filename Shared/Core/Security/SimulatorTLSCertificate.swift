import Foundation

/// The certificate `storekeeper-sim` presents on `STOREKEEPER_SIM_TLS_ADDR`:
/// self-signed, P-256, for `127.0.0.1` and `localhost`, valid 2024 to 2045.
/// Its own trust anchor (CA:TRUE, serverAuth), so a client that names it in
/// `STOREKEEPER_APPLE_CA_FILE` reaches the simulator as it reaches Apple:
/// TLS, then HTTP/2 or HTTP/1.1 by ALPN.
///
/// TEST ONLY. The private key is public; nothing trusts this certificate
/// unless it is named explicitly.
public enum SimulatorTLSCertificate {
    public static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIB9DCCAZqgAwIBAgIHU1RSS1NJTTAKBggqhkjOPQQDAjBGMRQwEgYDVQQKDAtT
        dG9yZWtlZXBlcjEuMCwGA1UEAwwlU3RvcmVrZWVwZXIgU2ltdWxhdG9yIFRMUyAo
        VEVTVCBPTkxZKTAeFw0yNDAxMDEwMDAwMDBaFw00NTEyMzEwMDAwMDBaMEYxFDAS
        BgNVBAoMC1N0b3Jla2VlcGVyMS4wLAYDVQQDDCVTdG9yZWtlZXBlciBTaW11bGF0
        b3IgVExTIChURVNUIE9OTFkpMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEXlCX
        CmT9iyjTn2ynyhMg4bxrG3LgRwPz+/ATU5qXbt1pauDPT6J5Bx0YbIrKoOsMTSiQ
        Z7T7aGgtCtUHpQ/v/KNzMHEwGgYDVR0RBBMwEYcEfwAAAYIJbG9jYWxob3N0MA8G
        A1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgKEMBMGA1UdJQQMMAoGCCsGAQUF
        BwMBMB0GA1UdDgQWBBTBpstosYLQJSxgpJZdXQOlNk6vtjAKBggqhkjOPQQDAgNI
        ADBFAiACFZbbW5j10cWF6ly8KS/AUrX6ojK/DjQVcro5fnVT4QIhAOPm5agw2I9o
        JC6ndihHYgo4kDPVloSEeQGxODzee2PJ
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
