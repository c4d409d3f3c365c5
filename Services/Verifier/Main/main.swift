import Verifier
import StorekeeperCore

await ProcessLauncher.run(name: VerifierApplication.executableName, makeServices: VerifierApplication.makeServices)
