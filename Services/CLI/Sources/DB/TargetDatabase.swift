import ArgumentParser
import Foundation
import StorekeeperCore

/// The PostgreSQL database a `storekeeper db` subcommand works on:
/// `--database-url`, else `STOREKEEPER_DATABASE_URL`. A missing or malformed
/// one ends the command with the configuration-error status (78), naming the
/// variable; `DatabaseURL` never renders the password.
enum TargetDatabase {
    static func url(flag: String?) throws -> DatabaseURL {
        do {
            guard let text = flag ?? EnvironmentReader().raw(.databaseURL) else {
                throw ConfigurationError(
                    variable: ConfigurationVariable.databaseURL.rawValue, reason: "is unset; set it or pass --database-url")
            }
            return try DatabaseURL(parsing: text)
        } catch {
            FileHandle.standardError.write(Data("configuration error: \(error)\n".utf8))
            throw ExitCode(ProcessLauncher.configurationErrorStatus)
        }
    }
}
