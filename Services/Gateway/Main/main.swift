import Gateway
import StorekeeperCore

EventLoopExecutor.install()
await ProcessLauncher.run(
    name: GatewayApplication.executableName, validate: { try $0.apple.requireBundleIDs() },
    makeServices: GatewayApplication.makeServices)
