import Verifier
import StorekeeperCore

EventLoopExecutor.install()
await ProcessLauncher.run(name: VerifierApplication.executableName, makeServices: VerifierApplication.makeServices)
