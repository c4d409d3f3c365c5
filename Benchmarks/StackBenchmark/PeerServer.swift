// The servers --peers compares: how each is started and stopped.
import BenchmarkSupport
import Foundation
import NIOCore
import ProcessSpawn

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server under test: its port and its processes.
struct Contender: Sendable {
    let name: String
    let port: Int
    /// Its processes now (a peer's workers are found below its first process).
    let processes: @Sendable () -> [Int32]
    let stop: @Sendable () -> Void
}

/// A peer (`DIR/run`, or the floor server), given the variables Storekeeper reads, on a free port and a data
/// directory of its own.
struct PeerServer: Sendable {
    let process: SpawnedProcess
    let port: Int
    let dataDirectory: String

    static func start(_ executable: URL, apple: AppleLink) async throws -> PeerServer {
        let port = freePort()
        let dataDirectory = NSTemporaryDirectory() + "storekeeper-peer-\(UUID().uuidString)"
        let environment = [
            // bench.sh puts the peers' virtual environment first.
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "STOREKEEPER_HTTP_ADDR": "127.0.0.1:\(port)",
            "STOREKEEPER_DATA_DIR": dataDirectory,
            "STOREKEEPER_APPLE_SHARED_SECRET": BenchStack.secret,
            "STOREKEEPER_BUNDLE_IDS": "com.example.storekeeper",
        ].merging(apple.clientEnvironment) { $1 }
        let process = try spawn(executable.path, environment: environment)
        let peer = PeerServer(process: process, port: port, dataDirectory: dataDirectory)
        for _ in 0..<300 {
            if try await ready(port) {
                // Every worker started, not just the first.
                try await Task.sleep(for: .seconds(1))
                return peer
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        peer.stop()
        throw BenchStack.NotReady()
    }

    /// Whether GET /readyz answers 200.
    private static func ready(_ port: Int) async throws -> Bool {
        guard let (_, response) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/readyz")!)
        else { return false }
        return (response as? HTTPURLResponse)?.statusCode == 200
    }

    func stop() {
        let tree = processTree(process.pid)
        process.terminateAndWait()
        // Workers their parent left behind.
        for pid in tree.dropFirst() where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }
}
