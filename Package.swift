// swift-tools-version:6.2
import PackageDescription

/// Project code builds in Swift 6 mode with every warning an error; dependencies keep their own settings.
let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "storekeeper",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "storekeeper-gateway", targets: ["GatewayMain"]),
        .executable(name: "storekeeper-verifier", targets: ["VerifierMain"]),
        .executable(name: "storekeeper-ledger", targets: ["LedgerMain"]),
        .executable(name: "storekeeper-sim", targets: ["SimMain"]),
        .executable(name: "storekeeper", targets: ["CLIMain"]),
        .executable(name: "storekeeper-bench-verifier", targets: ["VerifierBenchmark"]),
        .executable(name: "storekeeper-bench-ledger", targets: ["LedgerBenchmark"]),
        .executable(name: "storekeeper-bench-stack", targets: ["StackBenchmark"]),
        .executable(name: "storekeeper-bench-floor", targets: ["FloorServer"]),
        // A test fixture: a read-only disk for the ledger, loaded with LD_PRELOAD (DiskFaultTests).
        .library(name: "ReadOnlyDiskFault", type: .dynamic, targets: ["ReadOnlyDiskFault"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // MARK: C layers
        .systemLibrary(name: "CZeroMQ", path: "Shared/CZeroMQ"),
        .target(
            name: "CCurl",
            path: "Shared/CCurl",
            linkerSettings: [.linkedLibrary("curl")]
        ),

        // MARK: Shared
        // Generated protobuf messages keep their fields in a class, and each field read or write
        // was a run-time exclusivity check: about 48,000 of the stack's 1,367,000 instructions per
        // verification (callgrind). The generated code never overlaps accesses to that storage,
        // and the compile-time checks stay; only this target drops the run-time ones.
        .target(
            name: "Contracts",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Shared/Contracts",
            swiftSettings: strict + [.unsafeFlags(["-enforce-exclusivity=unchecked"])]
        ),
        .target(
            name: "ZeroMQ",
            dependencies: [
                "CZeroMQ", "OSThread",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/ZeroMQ",
            swiftSettings: strict
        ),
        .target(name: "TaskLanes", path: "Shared/TaskLanes", swiftSettings: strict),
        // Detached threads named from inside, for the loops that block (curl, ZeroMQ, the SQLite writer).
        .target(name: "OSThread", path: "Shared/OSThread", swiftSettings: strict),
        // The request/reply skeleton the ledger client and the verifier pool share: ids, the waiting
        // table, cancellation, expiry, and a timer loop that sleeps until the next thing due.
        .target(name: "RequestReply", path: "Shared/RequestReply", swiftSettings: strict),
        // The wall clock in milliseconds since the epoch, and the one Duration-to-milliseconds conversion.
        .target(name: "Timekeeping", path: "Shared/Timekeeping", swiftSettings: strict),
        .target(
            name: "CurlHTTP",
            dependencies: [
                "CCurl", "Timekeeping", "OSThread",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/CurlHTTP",
            swiftSettings: strict
        ),
        .target(
            name: "VerifierPool",
            dependencies: [
                "Contracts", "ZeroMQ", "TaskLanes", "StorekeeperCore", "Timekeeping", "RequestReply", "OSThread",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/VerifierPool",
            swiftSettings: strict
        ),
        .target(
            name: "LedgerClient",
            dependencies: [
                "Contracts", "ZeroMQ", "Timekeeping", "RequestReply",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/LedgerClient",
            swiftSettings: strict
        ),
        .target(
            name: "AppleJWS",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Shared/AppleJWS",
            swiftSettings: strict
        ),
        // Apple's formats: verifyReceipt answers, signed payloads, app receipts, the App Store Server API's bodies. Reading only, no calls.
        .target(
            name: "AppleFormats",
            dependencies: [
                "Contracts", .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Shared/AppleFormats",
            swiftSettings: strict
        ),
        .target(
            name: "StorekeeperCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), "Timekeeping",
            ],
            path: "Shared/Core",
            swiftSettings: strict
        ),

        // Child processes by posix_spawn: for the CLI's supervisor and the tests, not the services.
        .target(name: "ProcessSpawn", dependencies: ["Timekeeping", "OSThread"], path: "Shared/ProcessSpawn", swiftSettings: strict),

        // MARK: Services (logic) and their thin executables
        .target(
            name: "Gateway",
            dependencies: serviceDependencies + [
                "LedgerClient", "VerifierPool", "AppleFormats", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Services/Gateway/Sources", swiftSettings: strict),
        .executableTarget(name: "GatewayMain", dependencies: ["Gateway", "StorekeeperCore"], path: "Services/Gateway/Main", swiftSettings: strict),
        .target(
            name: "Verifier",
            dependencies: serviceDependencies + [
                "CurlHTTP", "VerifierPool", "LedgerClient", "AppleJWS", "AppleFormats",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/Verifier/Sources", swiftSettings: strict),
        .executableTarget(name: "VerifierMain", dependencies: ["Verifier", "StorekeeperCore"], path: "Services/Verifier/Main", swiftSettings: strict),
        .target(
            name: "Ledger",
            dependencies: serviceDependencies + [
                "VerifierPool", "LedgerClient", "RequestReply", "OSThread", "TaskLanes", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"), .product(name: "Yams", package: "Yams"),
            ],
            path: "Services/Ledger/Sources", swiftSettings: strict),
        .executableTarget(name: "LedgerMain", dependencies: ["Ledger", "StorekeeperCore"], path: "Services/Ledger/Main", swiftSettings: strict),
        .target(
            name: "Simulator",
            dependencies: serviceDependencies + [
                "CurlHTTP", "AppleJWS", "AppleFormats", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Services/Sim/Sources", swiftSettings: strict),
        .executableTarget(name: "SimMain", dependencies: ["Simulator", "StorekeeperCore"], path: "Services/Sim/Main", swiftSettings: strict),
        .target(
            name: "StorekeeperCLI",
            dependencies: serviceDependencies + [
                "LedgerClient", "AppleJWS", "Ledger", "Verifier", "AppleFormats", "CurlHTTP", "ProcessSpawn",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Services/CLI/Sources",
            swiftSettings: strict
        ),
        .executableTarget(name: "CLIMain", dependencies: ["StorekeeperCLI"], path: "Services/CLI/Main", swiftSettings: strict),

        // MARK: Benchmarks (print figures; never part of the test run)
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"), "StorekeeperCore", "ProcessSpawn",
            ],
            path: "Benchmarks/Support", swiftSettings: strict),
        .executableTarget(
            name: "StackBenchmark",
            dependencies: [
                "BenchmarkSupport", "ProcessSpawn", "TaskLanes", "StorekeeperCore", "AppleJWS", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/StackBenchmark", swiftSettings: strict),
        .executableTarget(
            name: "FloorServer",
            dependencies: [
                "BenchmarkSupport", "ProcessSpawn", "StorekeeperCore", "CurlHTTP", "AppleFormats", "Contracts", "LedgerClient", "ZeroMQ",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/FloorServer", swiftSettings: strict),
        .executableTarget(
            name: "VerifierBenchmark",
            dependencies: [
                "BenchmarkSupport", "ProcessSpawn", "VerifierPool", "Contracts", "ZeroMQ", "AppleJWS", "Verifier", "Timekeeping",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/VerifierBenchmark", swiftSettings: strict),
        .executableTarget(
            name: "LedgerBenchmark",
            dependencies: [
                "BenchmarkSupport", "ProcessSpawn", "LedgerClient", "Contracts", "ZeroMQ", .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/LedgerBenchmark", swiftSettings: strict),

        // MARK: Tests
        .target(
            name: "ReadOnlyDiskFault", path: "Tests/Fixtures/ReadOnlyDiskFault", linkerSettings: [.linkedLibrary("dl")]),
        .testTarget(
            name: "AppleJWSTests",
            dependencies: [
                "AppleJWS", .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/AppleJWSTests", resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(
            name: "AppleFormatsTests",
            dependencies: ["AppleFormats", "Contracts", .product(name: "PropertyBased", package: "swift-property-based")],
            path: "Tests/AppleFormatsTests", resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "ContractsTests", dependencies: ["Contracts", .product(name: "SwiftProtobuf", package: "swift-protobuf")], path: "Tests/ContractsTests", swiftSettings: strict),
        .testTarget(name: "OSThreadTests", dependencies: ["OSThread"], path: "Tests/OSThreadTests", swiftSettings: strict),
        // A guest a test pokes, for the descriptor hosts' tests.
        .target(
            name: "DescriptorHostTestSupport", dependencies: ["OSThread"], path: "Tests/Support/DescriptorHostTestSupport",
            swiftSettings: strict),
        .testTarget(name: "TaskLanesTests", dependencies: ["TaskLanes"], path: "Tests/TaskLanesTests", swiftSettings: strict),
        .testTarget(
            name: "RequestReplyTests", dependencies: ["RequestReply", "TaskOutcome"], path: "Tests/RequestReplyTests",
            swiftSettings: strict),
        .testTarget(
            name: "ZeroMQTests", dependencies: ["ZeroMQ", "CZeroMQ", "ZeroMQTestSupport"], path: "Tests/ZeroMQTests",
            swiftSettings: strict),
        // Polling a plain socket in a test with a bound wait.
        .target(name: "ZeroMQTestSupport", dependencies: ["ZeroMQ"], path: "Tests/Support/ZeroMQTestSupport", swiftSettings: strict),
        // A local HTTP server and a running client around a test, for CurlHTTPTests and LoadTests.
        .target(
            name: "CurlHTTPTestSupport",
            dependencies: [
                "CurlHTTP", "StorekeeperCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/CurlHTTPTestSupport", swiftSettings: strict),
        .testTarget(
            name: "CurlHTTPTests",
            dependencies: [
                "CurlHTTP", "CurlHTTPTestSupport", "StorekeeperCore", "OSThread", "ZeroMQTestSupport", "DescriptorHostTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/CurlHTTPTests",
            swiftSettings: strict
        ),
        // The benchmark's own arithmetic (its figures are only as good as it).
        .testTarget(
            name: "BenchmarkSupportTests",
            dependencies: [
                "BenchmarkSupport", "ProcessSpawn",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/BenchmarkSupportTests",
            swiftSettings: strict),
        // Heavy load on real sockets (hundreds to thousands of transfers at once): out of the unit
        // targets so that `swift test --filter` on one stays quick; `swift test` (scripts/test.sh, CI) runs it.
        .testTarget(
            name: "LoadTests", dependencies: ["CurlHTTP", "CurlHTTPTestSupport"], path: "Tests/LoadTests",
            swiftSettings: strict),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "StorekeeperCLI", "StorekeeperCore", "Contracts", "AppleJWS", "Verifier", .product(name: "Yams", package: "Yams"),
            ],
            path: "Tests/CLITests", swiftSettings: strict),
        .testTarget(
            name: "VerifierTests",
            dependencies: [
                "Verifier", "AppleFormats", "Contracts", "CurlHTTP", "StorekeeperCore", "AppleJWS", "CallGates",
                "ZeroMQ", "ZeroMQTestSupport", "LedgerClient",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/VerifierTests",
            resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(
            name: "SimulatorTests",
            dependencies: ["Simulator", "Contracts", "AppleJWS", "AppleFormats", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/SimulatorTests", swiftSettings: strict),
        // The Server API client against the simulator, both in this process, over 127.0.0.1.
        .testTarget(
            name: "ServerAPITests",
            dependencies: [
                "Verifier", "Simulator", "AppleFormats", "AppleJWS", "CurlHTTP", "Contracts", "StorekeeperCore", "CallGates",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"), .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            path: "Tests/ServerAPITests", swiftSettings: strict),
        .testTarget(
            name: "VerifierPoolTests",
            dependencies: [
                "VerifierPool", "ZeroMQ", "ZeroMQTestSupport", "Contracts", "Timekeeping", "TaskOutcome", "CallGates",
                "SeededRandom", "CurlHTTP", "OSThread",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/VerifierPoolTests", swiftSettings: strict),
        // Awaiting a task with a limit, so a test of a rule that hangs fails instead of hanging.
        .target(name: "TaskOutcome", path: "Tests/Support/TaskOutcome", swiftSettings: strict),
        // The same pseudo-random sequence on every run, for property tests.
        .target(name: "SeededRandom", path: "Tests/Support/SeededRandom", swiftSettings: strict),
        // Holding test doubles' calls in flight until the test lets them go, instead of timing them.
        .target(name: "CallGates", path: "Tests/Support/CallGates", swiftSettings: strict),
        // A throw-away PostgreSQL cluster for the tests of the ledger on PostgreSQL.
        .target(
            name: "PostgresTestServer",
            dependencies: [
                "StorekeeperCore", "ProcessSpawn", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/PostgresTestServer", swiftSettings: strict),
        .testTarget(
            name: "LedgerTests",
            dependencies: [
                "Ledger", "LedgerClient", "Verifier", "Gateway", "Simulator", "AppleFormats", "AppleJWS", "Contracts",
                "StorekeeperCore", "ZeroMQ", "PostgresTestServer", "Timekeeping", "TaskOutcome", "SeededRandom", "OSThread",
                "ZeroMQTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/LedgerTests", resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "Contracts", "StorekeeperCore", "LedgerClient",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/GatewayTests", resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "ProcessSpawnTests", dependencies: ["ProcessSpawn"], path: "Tests/ProcessSpawnTests", swiftSettings: strict),
        .testTarget(
            name: "CoreTests",
            dependencies: [
                "StorekeeperCore", "Timekeeping", "TaskOutcome", "CurlHTTP", .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Tests/CoreTests",
            swiftSettings: strict),
        // Slow tests that start the real executables as processes.
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "StorekeeperCore", "VerifierPool", "LedgerClient", "Contracts", "ZeroMQ", "PostgresTestServer", "AppleJWS",
                "ProcessSpawn", "SeededRandom",
                .product(name: "Hummingbird", package: "hummingbird"), .product(name: "Crypto", package: "swift-crypto"),
            ], path: "Tests/IntegrationTests", swiftSettings: strict),
    ]
)

/// What every service library builds on.
var serviceDependencies: [Target.Dependency] {
    [
        "Contracts", "ZeroMQ", "StorekeeperCore", "Timekeeping",
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
    ]
}
