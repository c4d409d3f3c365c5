import ArgumentParser
import StorekeeperCore

/// `storekeeper config`: validates the `STOREKEEPER_*` environment the way
/// every executable will at start-up, and prints each variable's effective
/// value (secrets only as set or unset).
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check the STOREKEEPER_* settings and print their effective values.")

    func run() throws {
        let reader = EnvironmentReader()
        do {
            _ = try StorekeeperConfiguration(reader: reader)
        } catch {
            print("configuration error: \(error)")
            throw ExitCode(ProcessLauncher.configurationErrorStatus)
        }
        for line in Self.describe(reader) { print(line) }
    }

    /// One line per variable: name, value, and where the value came from.
    static func describe(_ reader: EnvironmentReader) -> [String] {
        ConfigurationVariable.allCases.map { variable in
            let shown: String
            let origin: String
            switch (reader.raw(variable), variable.defaultValue) {
            case (let value?, _):
                shown = variable.isSecret ? "<set>" : value
                origin = "environment"
            case (nil, let fallback?):
                shown = fallback
                origin = "default"
            case (nil, nil):
                shown = "<unset>"
                origin = "default"
            }
            return "\(variable.rawValue)=\(shown)  (\(origin): \(variable.meaning))"
        } + reader.unknownVariables().map { "\($0): unknown variable, ignored (a typo?)" }
    }
}
