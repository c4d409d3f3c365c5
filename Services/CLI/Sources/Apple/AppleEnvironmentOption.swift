import ArgumentParser
import Contracts

/// `--environment production|sandbox`.
enum AppleEnvironmentOption: String, ExpressibleByArgument, CaseIterable {
    case production, sandbox

    var value: AppleEnvironment { self == .sandbox ? .sandbox : .production }
}
