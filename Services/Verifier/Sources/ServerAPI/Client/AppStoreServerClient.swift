import Contracts
import CurlHTTP
import Foundation
import Logging

/// The App Store Server API, as Storekeeper calls it: JWT authorization with
/// the App Store Connect key, production first and sandbox when production
/// knows no such transaction, retries of Apple's trouble within a deadline,
/// every page of a paginated answer, and every signed part of an answer
/// verified as a StoreKit 2 transaction is before it is returned.
///
/// Runs on the curl client (`transport` is its `execute`): put that client in
/// the `ServiceGroup` first. Every method may be called from any number of
/// tasks at once; each ends by its deadline (default
/// `configuration.deadline` from the call), pages and retries included.
///
/// ```swift
/// let client = AppStoreServerClient(configuration: configuration, reader: reader, logger: logger) { request throws(HTTPClientError) in
///     try await curl.execute(request)
/// }
/// let purchase = try await client.transactionInfo("2000000123456789")   // a VerifyResult, as for StoreKit 2
/// ```
public final class AppStoreServerClient: Sendable {
    public typealias Transport = @Sendable (HTTPRequest) async throws(HTTPClientError) -> HTTPResponse

    /// More pages than any customer's history holds (20 transactions a page); a loop past it is Apple's bug.
    static let maximumPages = 1_000

    public let configuration: ServerAPIClientConfiguration
    let executor: ServerAPIExecutor
    let checks: ServerAPIAnswerChecks
    private let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - reader: the verifier's StoreKit 2 reader (trusted roots, bundles, sandbox policy): the same checks.
    ///   - clock: the wall clock, for the tokens' `iat`/`exp` (tests move it).
    public init(
        configuration: ServerAPIClientConfiguration, reader: SignedDataReader, logger: Logger,
        clock: @escaping @Sendable () -> Date = { Date() }, backoff: Backoff = Backoff(), transport: @escaping Transport
    ) {
        self.configuration = configuration
        self.clock = clock
        executor = ServerAPIExecutor(
            productionURL: configuration.productionURL, sandboxURL: configuration.sandboxURL,
            tokens: ServerAPITokens(credentials: configuration.credentials, clock: clock),
            connectTimeout: configuration.connectTimeout, attemptTimeout: configuration.attemptTimeout,
            acceptSandbox: configuration.acceptSandbox, backoff: backoff, transport: transport, wallClock: clock,
            logger: logger)
        checks = ServerAPIAnswerChecks(
            reader: reader, bundleID: configuration.credentials.bundleID, appAppleID: configuration.appAppleID,
            logger: logger)
    }

    func deadline(_ given: ContinuousClock.Instant?) -> ContinuousClock.Instant {
        given ?? .now + configuration.deadline
    }

    var nowMs: Int64 { Int64(clock().timeIntervalSince1970 * 1_000) }

    /// Every page of a paginated endpoint, in the environment the first page
    /// came from (a later page never falls back). `request` builds the call for
    /// a page token; `next` reads a page's token and whether more follow.
    func allPages<Page: Decodable & Sendable>(
        of type: Page.Type, from start: String?, in environment: AppleEnvironment, deadline: ContinuousClock.Instant,
        request: (String?) -> ServerAPIRequest, next: (Page) -> (token: String?, hasMore: Bool)
    ) async throws(ServerAPIError) -> (environment: AppleEnvironment, pages: [Page], token: String?) {
        var token = start
        var environment = environment
        var pages: [Page] = []
        while true {
            let call = pages.isEmpty ? request(token) : request(token).withoutFallback
            let (answeredIn, page) = try await executor.perform(call, as: Page.self, in: environment, deadline: deadline)
            environment = answeredIn
            pages.append(page)
            let (nextToken, hasMore) = next(page)
            guard hasMore else { return (environment, pages, nextToken ?? token) }
            guard let nextToken, nextToken != token, pages.count < Self.maximumPages else {
                throw .answerInvalid(ServiceFailure(.appleUnavailable, message: "Apple's pages do not advance", retryable: true))
            }
            token = nextToken
        }
    }

    /// Each JWS verified as a transaction of `environment`.
    func transactions(
        _ signed: [String], in environment: AppleEnvironment, revision: String?
    ) async throws(ServerAPIError) -> ServerAPITransactions {
        var transactions: [Transaction] = []
        for jws in signed {
            transactions += try await checks.transaction(jws, from: environment, nowMs: nowMs).transactions
        }
        return ServerAPITransactions(
            environment: environment, transactions: transactions, signedTransactions: signed, revision: revision)
    }

    static func missing(_ field: String) -> ServerAPIError {
        .answerInvalid(SignedDataReader.invalid("Apple's answer has no \(field)"))
    }
}
