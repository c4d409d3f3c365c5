/// A configuration value that cannot be used. Stops the process at start-up.
///
/// The description names the variable and what was expected, never the value
/// itself when the variable holds a secret.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The `STOREKEEPER_*` variable (or flag) at fault.
    public let variable: String
    /// What was wrong, fit to show an operator.
    public let reason: String

    public init(variable: String, reason: String) {
        self.variable = variable
        self.reason = reason
    }

    public var description: String { "\(variable): \(reason)" }
}
