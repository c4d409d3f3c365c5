import CurlHTTP
import Logging
import ServiceLifecycle

/// A test server and a running client around a test body; both are stopped
/// when the body ends, whether it returned or threw.
public struct Harness: Sendable {
    public let server: TestServer
    public let client: CurlHTTPClient
    /// The client's service group: `triggerGracefulShutdown()` stops the client.
    public let clientGroup: ServiceGroup

    public func url(_ path: String) -> String { server.url(path) }

    public func get(_ path: String, totalTimeout: Duration? = nil, maxResponseBytes: Int? = nil) async throws(HTTPClientError)
        -> HTTPResponse
    {
        try await client.execute(
            HTTPRequest(method: .get, url: url(path), totalTimeout: totalTimeout, maxResponseBytes: maxResponseBytes))
    }

    public static func with<T: Sendable>(
        _ configuration: CurlHTTPClient.Configuration = .init(), tlsServer: Bool = false, logger: Logger = .quiet,
        _ body: (Harness) async throws -> T
    ) async throws -> T {
        try await TestServer.with(tls: tlsServer) { server in
            try await withRunningClient(configuration, logger: logger) { client, group in
                try await body(Harness(server: server, client: client, clientGroup: group))
            }
        }
    }
}

/// Runs a client in a `ServiceGroup`, as a service would, around `body`, then
/// shuts the group down gracefully and waits for the client's `run()` to end.
public func withRunningClient<T: Sendable>(
    _ configuration: CurlHTTPClient.Configuration = .init(), logger: Logger = .quiet,
    _ body: (CurlHTTPClient, ServiceGroup) async throws -> T
) async throws -> T {
    let client = CurlHTTPClient(configuration: configuration, logger: logger)
    let group = ServiceGroup(configuration: .init(services: [client], gracefulShutdownSignals: [], logger: .quiet))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        let result: Result<T, any Error>
        do { result = .success(try await body(client, group)) } catch { result = .failure(error) }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return try result.get()
    }
}

/// The error `operation` threw, or `nil` when it returned a response.
public func failure(of operation: () async throws(HTTPClientError) -> HTTPResponse) async -> HTTPClientError? {
    await outcome(of: operation).failure
}

/// What `operation` returned or threw, as a value a non-throwing `Task` can carry.
public func outcome(of operation: () async throws(HTTPClientError) -> HTTPResponse) async -> Result<HTTPResponse, HTTPClientError> {
    do {
        return .success(try await operation())
    } catch {
        return .failure(error)
    }
}

extension Result {
    public var failure: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
