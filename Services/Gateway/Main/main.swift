import Gateway
import StorekeeperCore

GatewayApplication.sizeEventLoops()
EventLoopExecutor.install()
await ProcessLauncher.run(
    name: GatewayApplication.executableName, validate: { try $0.apple.requireBundleIDs() },
    makeServices: GatewayApplication.makeServices)
