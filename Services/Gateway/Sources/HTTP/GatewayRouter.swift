import Contracts
import Foundation
import Hummingbird
import LedgerClient
import NIOCore
import Logging
import Prometheus
import StorekeeperCore

/// The HTTP API of the contract (spec: http-api.md; openapi.yaml).
struct GatewayRouter {
    struct Dependencies: Sendable {
        var orchestrator: ReceiptOrchestrator
        var ledger: any LedgerCalls
        var readiness: @Sendable () async -> Readiness
        var settings: GatewaySettings
        var sharedSecret: Secret?
        var bundleIDs: [String]
        var metrics: PrometheusCollectorRegistry
        /// `STOREKEEPER_ACCEPT_SANDBOX`: false acknowledges sandbox notifications without applying them.
        var acceptSandbox = true
    }

    struct Readiness: Sendable {
        var ledger: Bool
        var verifiers: Int
        var ready: Bool { ledger && verifiers > 0 }
    }

    static func make(_ dependencies: Dependencies) -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: RequestIDMiddleware())
        router.add(middleware: APIErrorMiddleware())
        // Requests, durations and errors per route and status (Hummingbird's hb_* metrics).
        router.add(middleware: MetricsMiddleware())
        router.get("/healthz") { _, _ in json(["status": "ok"]) }
        router.get("/readyz") { _, _ in
            let readiness = await dependencies.readiness()
            return json(
                ["ready": readiness.ready, "ledger": readiness.ledger, "verifiers": readiness.verifiers],
                status: readiness.ready ? .ok : .serviceUnavailable)
        }
        router.get("/metrics") { _, _ in MetricsEndpoint.response(dependencies.metrics) }
        router.post("/v1/notifications/apple") { request, context in
            try await notification(request, context, dependencies)
        }
        let api = router.group("/v1")
            .add(middleware: APIKeyMiddleware(keys: dependencies.settings.apiKeys))
            .add(middleware: RateLimitMiddleware(perMinute: dependencies.settings.rateLimitPerMinute))
        api.post("/receipts") { request, context in try await receipt(request, context, dependencies) }
        api.post("/transactions") { request, context in try await signedTransaction(request, context, dependencies) }
        api.get("/users/:user_id/entitlements") { _, context in try await entitlements(context, dependencies) }
        api.get("/users/:user_id/transactions") { request, context in
            try await TransactionsRoute.answer(request, context, dependencies)
        }
        return router
    }

    static func receipt(
        _ request: Request, _ context: GatewayRequestContext, _ dependencies: Dependencies
    ) async throws -> Response {
        let contentType = request.headers[.contentType]
        return try await submitted(request, context, dependencies) { body throws(IntakeError) in
            try ReceiptSubmission.parse(contentType: contentType, body: body)
        } submit: { submission, idempotency throws(APIError) in
            try await dependencies.orchestrator.submit(submission, idempotency: idempotency, requestID: context.requestID)
        }
    }

    static func signedTransaction(
        _ request: Request, _ context: GatewayRequestContext, _ dependencies: Dependencies
    ) async throws -> Response {
        try await submitted(request, context, dependencies) { body throws(IntakeError) in
            try TransactionSubmission.parse(body)
        } submit: { submission, idempotency throws(APIError) in
            try await dependencies.orchestrator.submit(submission, idempotency: idempotency, requestID: context.requestID)
        }
    }

    /// A receipt or a transaction (its JWS or its id): the body read by `parse` with its
    /// Idempotency-Key, then verified and recorded by `submit`.
    static func submitted<Submission>(
        _ request: Request, _ context: GatewayRequestContext, _ dependencies: Dependencies,
        parse: ([UInt8]) throws(IntakeError) -> Submission,
        submit: (Submission, IdempotencyKey?) async throws(APIError) -> ReceiptOrchestrator.Answer
    ) async throws -> Response {
        let body = try await collect(request, limit: dependencies.settings.maxBodyBytes)
        let submission: Submission
        let idempotency: IdempotencyKey?
        do throws(IntakeError) {
            submission = try parse(body)
            idempotency = try IdempotencyHeader.key(request.headers, scope: context.apiKeyScope, body: body)
        } catch {
            throw error.apiError
        }
        return try recorded(try await submit(submission, idempotency), context)
    }

    /// The answer of a receipt or signed transaction the ledger recorded (or
    /// kept under an Idempotency-Key), and its log line.
    static func recorded(_ answer: ReceiptOrchestrator.Answer, _ context: GatewayRequestContext) throws -> Response {
        guard let verified = answer.verified else {
            context.logger.info("kept answer sent again", metadata: ["ledger.granted": "\(answer.outcome.granted.count)"])
            return written(ReceiptAnswerJSON.receipt(answer.outcome))
        }
        context.logger.info(
            "receipt recorded",
            metadata: [
                "receipt.style": "\(verified.style)",
                "receipt.sha256": "\(verified.receiptSha256.prefix(16))",
                "ledger.granted": "\(answer.outcome.granted.count)",
                "ledger.already_granted": "\(answer.outcome.alreadyGranted.count)",
            ])
        return written(ReceiptAnswerJSON.receipt(answer.outcome))
    }

    static func entitlements(_ context: GatewayRequestContext, _ dependencies: Dependencies) async throws -> Response {
        // The router hands over the raw path segment: an id with a space or a slash arrives percent-encoded.
        let user: String
        do {
            user = try ReceiptSubmission.checkedUserID(context.parameters.get("user_id")?.removingPercentEncoding)
        } catch {
            throw error.apiError
        }
        do {
            let answer = try await dependencies.ledger.entitlements(
                of: user, atMilliseconds: 0, requestID: context.requestID,
                deadlineMilliseconds: dependencies.orchestrator.clock.deadline(after: RouteDeadlines.read))
            return written(ReceiptAnswerJSON.entitlements(answer))
        } catch let failure as ServiceFailure {
            throw APIError(failure)
        } catch {
            throw APIError.unavailable
        }
    }

    static func notification(
        _ request: Request, _ context: GatewayRequestContext, _ dependencies: Dependencies
    ) async throws -> Response {
        let body = try await collect(request, limit: dependencies.settings.maxBodyBytes)
        let notification: NotificationApply
        switch try NotificationBody.read(body) {
        case .version2(let signedPayload):
            do throws(APIError) {
                notification = try await dependencies.orchestrator.decodeNotification(
                    signedPayload: signedPayload, requestID: context.requestID)
            } catch {
                guard error.code == .sandboxNotAccepted else { throw error }
                return unappliedSandboxNotification(context)
            }
            // TEST, and summaries: verified, but about no purchase; nothing to store.
            guard !notification.originalTransactionID.isEmpty else {
                context.logger.info(
                    "notification acknowledged", metadata: ["notification.type": "\(notification.notificationType)"])
                return json(["applied": false])
            }
        case .version1(let parsed):
            notification = try NotificationV1Decoder.decode(
                parsed, bytes: body, sharedSecret: dependencies.sharedSecret, bundleIDs: dependencies.bundleIDs,
                receivedAt: dependencies.orchestrator.clock.now())
            if notification.environment == .sandbox, !dependencies.acceptSandbox {
                return unappliedSandboxNotification(context)
            }
            if notification.subjectUnknown {
                context.logger.warning(
                    "version 1 notification about no single subscription: its auto-renew status and REVOKE are not applied; the refresh settles them",
                    metadata: ["notification.type": "\(notification.notificationType)"])
            }
        }
        do {
            let outcome = try await dependencies.ledger.applyNotification(
                notification, requestID: context.requestID,
                deadlineMilliseconds: dependencies.orchestrator.clock.deadline(after: RouteDeadlines.notification))
            context.logger.info(
                "notification stored",
                metadata: [
                    "notification.type": "\(notification.notificationType)", "notification.applied": "\(outcome.applied)",
                ])
            return json(["applied": outcome.applied])
        } catch let failure as ServiceFailure {
            throw APIError(failure)
        } catch {
            throw APIError.unavailable
        }
    }

    /// STOREKEEPER_ACCEPT_SANDBOX=false: Apple gets its 200 (or it would retry
    /// for days), and nothing is stored.
    static func unappliedSandboxNotification(_ context: GatewayRequestContext) -> Response {
        context.logger.info("sandbox notification acknowledged, not applied (STOREKEEPER_ACCEPT_SANDBOX=false)")
        return json(["applied": false])
    }

    /// The whole body, or 413 past the limit.
    static func collect(_ request: Request, limit: Int) async throws -> [UInt8] {
        do {
            return Array(buffer: try await request.body.collect(upTo: limit))
        } catch is NIOTooManyBytesError {
            throw APIError.payloadTooLarge
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.payloadTooLarge
        }
    }

    /// An answer of the contract's JSON, written by ReceiptAnswerJSON.
    static func written(_ json: [UInt8]) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }

    /// An answer of the contract's JSON from an Encodable. Keys sorted: the
    /// encoder's own order varies between two encodings of one value.
    static func encoded(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(value)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Keys unsorted: sorting them (locale-aware) cost more than the rest of the
    /// serialization. (`APIError.response` writes its keys in the spec's order.)
    static func json(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
