import CCurl
import Logging

extension MultiLoop {
    /// Easy handles kept for reuse (`curl_easy_reset` keeps their buffers and caches).
    static let maxIdleEasyHandles = 256

    /// Puts newly taken requests into curl; returns failures of those it could not.
    func start(_ requests: [QueuedRequest]) -> [TransferOutcome] {
        let now = ContinuousClock.now
        return requests.compactMap { queued in
            start(queued, now: now).map { (queued.id, .failure($0)) }
        }
    }

    private func start(_ queued: QueuedRequest, now: ContinuousClock.Instant) -> HTTPClientError? {
        let request = queued.request
        // The total time-out counts from `execute`, so time spent queued is spent.
        let remaining = (request.totalTimeout ?? configuration.totalTimeout) - (now - queued.enqueuedAt)
        guard remaining > .zero else { return .timedOut }
        let connectTimeout = min(request.connectTimeout ?? configuration.connectTimeout, remaining)
        guard let easy = idleEasyHandles.popLast() ?? curl_easy_init() else {
            return .transport(curlCode: Int(CURLE_OUT_OF_MEMORY.rawValue))
        }
        let transfer = Transfer(
            id: queued.id, easy: easy, maxBodyBytes: request.maxResponseBytes ?? configuration.maxResponseBytes)
        guard
            transfer.configure(
                for: request, connectTimeout: connectTimeout, totalTimeout: remaining,
                userAgent: configuration.userAgent, caFile: configuration.caFile)
        else {
            recycle(transfer)
            return .invalidRequest
        }
        // The shard with the most room for this origin: a transfer waits inside curl for a
        // connection only when every shard's share of the cap is in use, as with one handle.
        let origin = request.origin
        // Each shard's room read once (`max(by:)` read two per comparison, each a hashed look-up).
        var shard = shards[0]
        var room = shard.room(for: origin)
        for candidate in shards.dropFirst() {
            let candidateRoom = candidate.room(for: origin)
            if candidateRoom > room { (shard, room) = (candidate, candidateRoom) }
        }
        let code = curl_multi_add_handle(shard.multi, easy)
        guard code == CURLM_OK else {
            logger.debug("curl refused a transfer", metadata: ["http.request_id": "\(queued.id)", "curl.multi_code": "\(code.rawValue)"])
            recycle(transfer)
            return .transport(curlCode: Int(CURLE_FAILED_INIT.rawValue))
        }
        active[queued.id] = transfer
        transfer.shard = shard
        transfer.origin = origin
        shard.added(origin)
        return nil
    }

    /// Reads curl's finished transfers from the shards it acted on (`acted`,
    /// cleared here) and returns the outcome of each. A transfer finishes only
    /// inside `curl_multi_socket_action`.
    func collectFinished(from acted: inout [Bool]) -> [TransferOutcome] {
        var results: [TransferOutcome] = []
        for index in acted.indices where acted[index] {
            acted[index] = false
            collectFinished(from: shards[index], into: &results)
        }
        return results
    }

    private func collectFinished(from shard: MultiShard, into results: inout [TransferOutcome]) {
        var remainingMessages: Int32 = 0
        while let message = curl_multi_info_read(shard.multi, &remainingMessages) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result  // the message dies with the handle's removal
            var pointer: UnsafeMutableRawPointer?
            guard ccurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer) == CURLE_OK, let pointer else {
                continue
            }
            let transfer = Transfer.from(pointer)
            results.append((transfer.id, result(of: transfer, code: code)))
            active[transfer.id] = nil
            retire(transfer)
        }
    }

    private func result(of transfer: Transfer, code: CURLcode) -> Result<HTTPResponse, HTTPClientError> {
        guard code == CURLE_OK else {
            let error = HTTPClientError(curlCode: code, capExceeded: transfer.capExceeded)
            logger.debug(
                "transfer failed",
                metadata: ["http.request_id": "\(transfer.id)", "curl.code": "\(code.rawValue)", "error": "\(error)"])
            return .failure(error)
        }
        var status = 0
        _ = ccurl_easy_getinfo_long(transfer.easy, CURLINFO_RESPONSE_CODE, &status)
        if logger.logLevel <= .trace {
            var newConnections = 0
            var totalMicroseconds: curl_off_t = 0
            _ = ccurl_easy_getinfo_long(transfer.easy, CURLINFO_NUM_CONNECTS, &newConnections)
            _ = ccurl_easy_getinfo_off(transfer.easy, CURLINFO_TOTAL_TIME_T, &totalMicroseconds)
            logger.trace(
                "transfer done",
                metadata: [
                    "http.request_id": "\(transfer.id)", "http.status": "\(status)",
                    "curl.new_connections": "\(newConnections)", "curl.total_time_us": "\(totalMicroseconds)",
                ])
        }
        var version = 0
        _ = ccurl_easy_getinfo_long(transfer.easy, CURLINFO_HTTP_VERSION, &version)
        return .success(
            HTTPResponse(status: status, headers: transfer.headers, body: transfer.body, version: .init(curlVersion: version)))
    }

    /// Takes a transfer out of curl and keeps its easy handle for the next one.
    func retire(_ transfer: Transfer) {
        if let shard = transfer.shard {
            _ = curl_multi_remove_handle(shard.multi, transfer.easy)
            shard.removed(transfer.origin)
            transfer.shard = nil
        }
        recycle(transfer)
    }

    private func recycle(_ transfer: Transfer) {
        transfer.release()
        if idleEasyHandles.count < Self.maxIdleEasyHandles {
            curl_easy_reset(transfer.easy)
            idleEasyHandles.append(transfer.easy)
        } else {
            curl_easy_cleanup(transfer.easy)
        }
    }
}

extension HTTPResponse.Version {
    /// From `CURLINFO_HTTP_VERSION`.
    init?(curlVersion: Int) {
        switch curlVersion {
        case Int(CURL_HTTP_VERSION_1_0), Int(CURL_HTTP_VERSION_1_1): self = .http1
        case Int(CURL_HTTP_VERSION_2_0): self = .http2
        case Int(CURL_HTTP_VERSION_3): self = .http3
        default: return nil
        }
    }
}
