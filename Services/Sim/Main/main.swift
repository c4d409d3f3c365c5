import Simulator
import StorekeeperCore

await ProcessLauncher.run(name: SimulatorApplication.executableName, makeServices: SimulatorApplication.makeServices)
