// storekeeper-bench-floor: the least a verification costs with Storekeeper's
// own libraries in one process, no ZeroMQ hop (issue 20); FloorServer.swift
// says why. With --zeromq-hops [N]: what one ZeroMQ round trip between two
// processes costs (HopBenchmark.swift).
let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "--zeromq-hops": try await HopBenchmark.run(roundTrips: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000)
case HopLatency.rawEchoFlag: try HopLatency.rawEcho(arguments.dropFirst().first ?? "")
case HopBenchmark.echoFlag: try await HopBenchmark.echo(arguments.dropFirst().first ?? "")
default: try await FloorServer.runFromEnvironment()
}
