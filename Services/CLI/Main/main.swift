import StorekeeperCLI

await StorekeeperCommand.runAsMain()
