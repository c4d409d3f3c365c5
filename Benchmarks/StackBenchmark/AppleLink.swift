import Foundation
import StorekeeperCore

// How the servers under test reach the simulator that stands in for Apple:
// plain HTTP/1.1 on its STOREKEEPER_SIM_ADDR, or (--apple-tls) TLS on its
// STOREKEEPER_SIM_TLS_ADDR, where libcurl and the simulator agree on HTTP/2
// by ALPN, as production reaches Apple's https endpoints.
struct AppleLink {
    let http1Port: Int
    /// Set: servers that can, call the simulator over TLS here, trusting its test certificate.
    private(set) var tls: (port: Int, caFile: String)?

    init(http1Port: Int, tlsPort: Int?) throws {
        self.http1Port = http1Port
        tls = try tlsPort.map { ($0, try SimulatorTLSCertificate.writeCertificate()) }
    }

    /// The same simulator, over plain HTTP/1.1 only (for clients that have no HTTP/2).
    var plain: AppleLink {
        var link = self
        link.tls = nil
        return link
    }

    /// The base URL the servers call.
    var base: String { tls.map { "https://127.0.0.1:\($0.port)" } ?? "http://127.0.0.1:\(http1Port)" }

    /// The simulator's listen addresses.
    var simulatorEnvironment: [String: String] {
        var environment = ["STOREKEEPER_SIM_ADDR": "127.0.0.1:\(http1Port)"]
        if let tls { environment["STOREKEEPER_SIM_TLS_ADDR"] = "127.0.0.1:\(tls.port)" }
        return environment
    }

    /// verifyReceipt's URLs, and the certificate to trust over TLS.
    var clientEnvironment: [String: String] {
        var environment = [
            "STOREKEEPER_APPLE_PRODUCTION_URL": base + "/production/verifyReceipt",
            "STOREKEEPER_APPLE_SANDBOX_URL": base + "/sandbox/verifyReceipt",
        ]
        if let tls { environment["STOREKEEPER_APPLE_CA_FILE"] = tls.caFile }
        return environment
    }
}
