import ArgumentParser

/// `storekeeper`: the operator's command line.
public struct StorekeeperCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "storekeeper",
        abstract: "Operate a Storekeeper stack: Apple In-App Purchase verification and the ledger of what users own.",
        version: "0.1.0",
        subcommands: [
            UpCommand.self, VerifyCommand.self, EntitlementsCommand.self, EventsCommand.self, SimCommand.self,
            ConfigCommand.self, DBCommand.self, AppleCommand.self,
        ])

    public init() {}
}

extension StorekeeperCommand {
    /// The executable's entry point: parses the command line and runs the
    /// chosen subcommand, awaiting the asynchronous ones. (From top-level
    /// code, `main()` resolves to ParsableCommand's synchronous variant.)
    public static func runAsMain() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
