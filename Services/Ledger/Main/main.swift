import Ledger
import StorekeeperCore

EventLoopExecutor.install()
await ProcessLauncher.run(
    name: LedgerApplication.executableName, validate: { _ = try LedgerApplication.catalog($0.ledger) },
    makeServices: LedgerApplication.makeServices)
