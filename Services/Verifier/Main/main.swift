import Verifier
import StorekeeperCore

EventLoopExecutor.install()
await ProcessLauncher.run(
    name: VerifierApplication.executableName, validate: { try $0.apple.requireBundleIDs() },
    makeServices: VerifierApplication.makeServices)
