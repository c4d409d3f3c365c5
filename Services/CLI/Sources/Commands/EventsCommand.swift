import ArgumentParser
import Contracts
import Foundation
import LedgerClient
import Logging
import StorekeeperCore
import ZeroMQ

/// `storekeeper events tail`: follows the ledger's event stream.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "The ledger's event stream.", subcommands: [Tail.self])

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every event after --since, then follow, one JSON object a line, in seq order, none missed.")

        @Option(help: "Start after this seq (0: every event the ledger still holds).") var since: UInt64 = 0
        @Option(help: "Only events whose topic starts with this (e.g. transaction.revoked or subscription.).")
        var topic: String?
        @Option(help: "Stop after printing this many events.") var count: Int?

        func validate() throws {
            if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        }

        func run() async throws {
            let configuration: StorekeeperConfiguration
            do {
                configuration = try StorekeeperConfiguration(reader: EnvironmentReader())
            } catch {
                FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
                throw ExitCode(ProcessLauncher.configurationErrorStatus)
            }
            var logger = Logger(label: "storekeeper-events") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = .warning
            let subscriber = LedgerEventSubscriber(
                context: ZMQContext(), eventsEndpoint: configuration.endpoints.events,
                replayEndpoint: configuration.endpoints.replay, logger: logger)
            let filter = EventLineFilter(topicPrefix: topic, limit: count)
            do {
                try await subscriber.run(after: since) { event in
                    guard let line = try filter.line(for: event) else { return }
                    // Unbuffered: whoever reads a pipe sees each event as it comes.
                    FileHandle.standardOutput.write(Data((line + "\n").utf8))
                    if filter.isDone { throw EventLineFilter.Done() }
                }
            } catch is EventLineFilter.Done {
                return
            } catch let lost as LedgerEventSubscriber.EventsLost {
                FileHandle.standardError.write(Data("error: \(lost)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}
