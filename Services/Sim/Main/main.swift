import Simulator
import StorekeeperCore

EventLoopExecutor.install()
await ProcessLauncher.run(name: SimulatorApplication.executableName, makeServices: SimulatorApplication.makeServices)
