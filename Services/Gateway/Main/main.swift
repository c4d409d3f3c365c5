import Gateway
import StorekeeperCore

EventLoopExecutor.install()
await ProcessLauncher.run(name: GatewayApplication.executableName, makeServices: GatewayApplication.makeServices)
