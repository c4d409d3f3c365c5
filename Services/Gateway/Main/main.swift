import Gateway
import StorekeeperCore

await ProcessLauncher.run(name: GatewayApplication.executableName, makeServices: GatewayApplication.makeServices)
