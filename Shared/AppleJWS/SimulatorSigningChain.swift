/// The simulator's own signing chain, in the shape of Apple's (root, then an
/// intermediate with the WWDR marker extension, then a leaf with the
/// receipt-signing marker), so StoreKit 2 and notification v2 flows run end to
/// end on a machine that cannot reach Apple.
///
/// TEST ONLY. Nothing trusts this root unless it is named explicitly in
/// `STOREKEEPER_JWS_EXTRA_ROOTS` (`storekeeper up --sim` does). Only the leaf's
/// private key is here; the root's and the intermediate's were thrown away
/// after they signed (with openssl; valid 2024 to 2045), so nothing can
/// extend the chain.
public enum SimulatorSigningChain {
    public static let rootCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBxDCCAWugAwIBAgIBEDAKBggqhkjOPQQDAjBKMTIwMAYDVQQDDClTdG9yZWtl
        ZXBlciBTaW11bGF0b3IgUm9vdCBDQSAoVEVTVCBPTkxZKTEUMBIGA1UECgwLU3Rv
        cmVrZWVwZXIwHhcNMjQwMTAxMDAwMDAwWhcNNDUxMjMxMDAwMDAwWjBKMTIwMAYD
        VQQDDClTdG9yZWtlZXBlciBTaW11bGF0b3IgUm9vdCBDQSAoVEVTVCBPTkxZKTEU
        MBIGA1UECgwLU3RvcmVrZWVwZXIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATa
        c+ZDk5BxuR2J+3t3lvhT5ddXwUiTmXfV8PvmNSSsq71DrtrqX+f0pE49ymJCyuIb
        M5VFOqzMUjUKvRbsIUf0o0IwQDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQE
        AwIBBjAdBgNVHQ4EFgQUgsA46usm0nZzYxlN8vIKwjmu/u0wCgYIKoZIzj0EAwID
        RwAwRAIgMhO1lebYi8SDOz1bktPrsg2AGakJ7nDMqxhq2kupRqgCICZoIcVuUoST
        XOZsPnadSmP+SeGm3lIsVDyZaxeP2Tnn
        -----END CERTIFICATE-----
        """
    public static let intermediateCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIB+zCCAaGgAwIBAgIBETAKBggqhkjOPQQDAjBKMTIwMAYDVQQDDClTdG9yZWtl
        ZXBlciBTaW11bGF0b3IgUm9vdCBDQSAoVEVTVCBPTkxZKTEUMBIGA1UECgwLU3Rv
        cmVrZWVwZXIwHhcNMjQwMTAxMDAwMDAwWhcNNDUxMjMxMDAwMDAwWjBKMTIwMAYD
        VQQDDClTdG9yZWtlZXBlciBTaW11bGF0b3IgV1dEUiBDQSAoVEVTVCBPTkxZKTEU
        MBIGA1UECgwLU3RvcmVrZWVwZXIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATM
        y8+49JnNn4YI0W8Teyff2O+PXgg/hzmphbQiZbVIv4TmQR4uFYfEp5rldqTs9Qb3
        Lu04oLKbdrq5VUxYCXGyo3gwdjASBgNVHRMBAf8ECDAGAQH/AgEAMA4GA1UdDwEB
        /wQEAwIBBjAdBgNVHQ4EFgQUxk9ddO9A/k8P7tBhMkzEJReNXY4wHwYDVR0jBBgw
        FoAUgsA46usm0nZzYxlN8vIKwjmu/u0wEAYKKoZIhvdjZAYCAQQCBQAwCgYIKoZI
        zj0EAwIDSAAwRQIhAJPIA8VNWYR4CG4TazvRWeOy6HSUIbyN7t7sWfKlzCquAiBP
        /Ti59ZLOZpi5j05Z7DCs4XJh/huQEYaQvGN3sc9AGA==
        -----END CERTIFICATE-----
        """
    public static let leafCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIICADCCAaWgAwIBAgIBEjAKBggqhkjOPQQDAjBKMTIwMAYDVQQDDClTdG9yZWtl
        ZXBlciBTaW11bGF0b3IgV1dEUiBDQSAoVEVTVCBPTkxZKTEUMBIGA1UECgwLU3Rv
        cmVrZWVwZXIwHhcNMjQwMTAxMDAwMDAwWhcNNDUxMjMxMDAwMDAwWjBUMTwwOgYD
        VQQDDDNTdG9yZWtlZXBlciBTaW11bGF0b3IgQXBwIFN0b3JlIFNpZ25pbmcgKFRF
        U1QgT05MWSkxFDASBgNVBAoMC1N0b3Jla2VlcGVyMFkwEwYHKoZIzj0CAQYIKoZI
        zj0DAQcDQgAEtRlpfPq6YlRf/mQWjq49QeAOJbrgeeUGbbWraUCxWDLPaKO+Ck8Z
        p8ebr5XMoOFrZNIzi+soI+t7XjZG1TjqWqNyMHAwDAYDVR0TAQH/BAIwADAOBgNV
        HQ8BAf8EBAMCB4AwHQYDVR0OBBYEFPim6q/r+tFO48guLa/q14kIZOXnMB8GA1Ud
        IwQYMBaAFMZPXXTvQP5PD+7QYTJMxCUXjV2OMBAGCiqGSIb3Y2QGCwEEAgUAMAoG
        CCqGSM49BAMCA0kAMEYCIQDeMlJDEJy4uALhLmM4LWEeXETCGu6bRrcOTlFXfHze
        qQIhANAabmE8C6qdu6a6hHt8vyETqMlgQGLW5spxx6iGwPNt
        -----END CERTIFICATE-----
        """
    public static let leafPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg58mPYVuahdniagDV
        z3M2vVuatW7ezhmrfYa5qBd/MnmhRANCAAS1GWl8+rpiVF/+ZBaOrj1B4A4luuB5
        5QZttatpQLFYMs9oo74KTxmnx5uvlcyg4Wtk0jOL6ygj63teNkbVOOpa
        -----END PRIVATE KEY-----
        """
}
