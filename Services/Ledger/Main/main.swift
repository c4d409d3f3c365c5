import Ledger
import StorekeeperCore

await ProcessLauncher.run(name: LedgerApplication.executableName, makeServices: LedgerApplication.makeServices)
