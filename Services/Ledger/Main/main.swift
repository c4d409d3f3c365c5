import Ledger
import StorekeeperCore

EventLoopExecutor.install()
await ProcessLauncher.run(name: LedgerApplication.executableName, makeServices: LedgerApplication.makeServices)
