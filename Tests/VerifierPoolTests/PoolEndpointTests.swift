import Testing

@testable import VerifierPool

@Suite struct PoolEndpointTests {
    @Test func aHostNameIsResolvedAndEverythingElseIsConnectedAsWritten() {
        #expect(PoolEndpoint("tcp://gateway:7421") == .named(host: "gateway", port: 7421))
        #expect(PoolEndpoint("tcp://gw.storekeeper.svc.cluster.local:7421") == .named(host: "gw.storekeeper.svc.cluster.local", port: 7421))
        for fixed in [
            "tcp://127.0.0.1:7421", "tcp://10.0.0.7:7421", "tcp://[::1]:7421", "tcp://[fd00::7]:7421",
            "tcp://localhost:7421", "tcp://LocalHost:7421", "ipc:///tmp/pool", "inproc://pool", "tcp://*:7421",
            "tcp://gateway", "tcp://gateway:0",
        ] {
            #expect(PoolEndpoint(fixed) == .fixed(fixed), "\(fixed)")
        }
    }

    @Test func addressesBecomeEndpointsWithIPv6InBrackets() {
        #expect(PoolEndpoint.tcp(address: "172.18.0.5", port: 7421) == "tcp://172.18.0.5:7421")
        #expect(PoolEndpoint.tcp(address: "fd00::5", port: 7421) == "tcp://[fd00::5]:7421")
        #expect(PoolEndpoint.isIPv6("tcp://[fd00::5]:7421"))
        #expect(!PoolEndpoint.isIPv6("tcp://172.18.0.5:7421"))
    }
}
