import Verifier
import StorekeeperCore

EventLoopExecutor.install()
await ProcessLauncher.run(
    name: VerifierApplication.executableName, validate: VerifierApplication.validate,
    makeServices: VerifierApplication.makeServices)
