import Contracts
import Foundation
import Testing
import ZeroMQ

/// The ledger's disk refuses writes, then takes them again. Full: the running
/// ledger's file-size limit is lowered under its database with prlimit(1).
/// Read-only: a preloaded library (Tests/Fixtures/ReadOnlyDiskFault) fails
/// its writes with EROFS, as on a disk remounted read-only. Meanwhile every
/// record is answered with a retryable failure and nothing is half-written;
/// afterwards the ledger works again by itself, without a restart.
@Suite("Disk faults: the ledger refuses, then recovers", .serialized)
struct DiskFaultTests {
    @Test func aFullDiskFailsRecordsRetryablyAndTheLedgerRecoversWhenItIsGone() async throws {
        let ledger = try await LedgerProcess()
        let pid = ledger.process.pid
        await Self.refuseThenRecover(
            ledger, inject: { try await Self.limitFileSize(of: pid, to: "4096") },
            lift: { try await Self.limitFileSize(of: pid, to: "unlimited") })
    }

    @Test func aReadOnlyDiskFailsRecordsRetryablyAndTheLedgerRecoversWhenItIsWritableAgain() async throws {
        // The fault switch: while this file exists, the preloaded library refuses writes under the data directory.
        let faultSwitch = FileManager.default.temporaryDirectory.appendingPathComponent("readonly-\(UUID().uuidString)")
        let ledger = try await LedgerProcess(extraEnvironment: [
            "LD_PRELOAD": BuildProducts.url(of: "libReadOnlyDiskFault.so").path,
            "READONLY_FAULT_SWITCH": faultSwitch.path,
        ])
        await Self.refuseThenRecover(
            ledger, inject: { #expect(FileManager.default.createFile(atPath: faultSwitch.path, contents: nil)) },
            lift: { try FileManager.default.removeItem(at: faultSwitch) })
        try? FileManager.default.removeItem(at: faultSwitch)
    }

    /// One record before the fault, three refused during it (reads still
    /// answered), then the refused ones granted once after it; the events have
    /// no gap. Stops the ledger.
    static func refuseThenRecover(
        _ ledger: LedgerProcess, inject: () async throws -> Void, lift: () async throws -> Void
    ) async {
        let context = ZMQContext()
        let client = ledger.client(context)
        let runner = Task { try await client.run() }
        do {
            let before = try await client.record(recordRequest(user: "disk", transactionIDs: ["disk-1"]), requestID: "disk-1")
            #expect(before.granted.map(\.transactionID) == ["disk-1"])

            try await inject()
            for round in 0..<3 {
                do {
                    _ = try await client.record(
                        recordRequest(user: "disk", transactionIDs: ["disk-2", "disk-3"]), requestID: "refused-\(round)")
                    Issue.record("a record was answered while the disk refused writes")
                } catch let failure as ServiceFailure {
                    #expect(failure.retryable, "\(failure)")
                }
            }
            // Reads are still answered (a failure would throw).
            _ = try await client.entitlements(of: "disk", requestID: "read")
            #expect(ledger.process.isRunning, "the ledger must survive the fault")

            try await lift()
            // Nothing of the refused records was kept: they are granted now, once.
            let after = try await client.record(
                recordRequest(user: "disk", transactionIDs: ["disk-2", "disk-3"]), requestID: "after")
            #expect(Set(after.granted.map(\.transactionID)) == ["disk-2", "disk-3"])
            let replayed = try await client.record(recordRequest(user: "disk", transactionIDs: ["disk-1"]), requestID: "again")
            #expect(replayed.granted.isEmpty && replayed.alreadyGranted == ["disk-1"])
            let events = try await ledger.replayAll(context)
            #expect(events.map(\.seq) == Array(1...UInt64(max(events.count, 1))))
            #expect(events.filter { $0.topic == "transaction.granted" }.count == 3)
        } catch {
            Issue.record("\(error)")
        }
        runner.cancel()
        #expect(await ledger.stop() == 0)
    }

    /// Sets the running process's RLIMIT_FSIZE soft limit (the hard limit stays as it is).
    static func limitFileSize(of pid: pid_t, to soft: String) async throws {
        try await runTool("/usr/bin/prlimit", ["--pid", "\(pid)", "--fsize=\(soft):"])
    }
}
