import Testing

@testable import VerifierPool

/// The diff of address sets into connect and retire changes, without DNS,
/// sockets or a clock.
@Suite struct PoolDirectoryTests {
    @Test func fixedEndpointsConnectOnceAndNeverLeave() {
        var directory = PoolDirectory(endpoints: ["tcp://127.0.0.1:7421", "tcp://127.0.0.1:7424"])
        #expect(directory.names.isEmpty)
        #expect(directory.update([:]) == [.connect("tcp://127.0.0.1:7421"), .connect("tcp://127.0.0.1:7424")])
        #expect(directory.update([:]).isEmpty)
    }

    @Test func aNameConnectsEachAddressAndFollowsItsAnswers() {
        var directory = PoolDirectory(endpoints: ["tcp://gateway:7421", "tcp://127.0.0.1:7424"])
        #expect(directory.names == ["gateway"])
        // The first gateway runs.
        #expect(
            directory.update(["gateway": .addresses(["172.18.0.5"])])
                == [.connect("tcp://172.18.0.5:7421"), .connect("tcp://127.0.0.1:7424")])
        // A gateway started later appears; nothing else moves.
        #expect(directory.update(["gateway": .addresses(["172.18.0.5", "172.18.0.6"])]) == [.connect("tcp://172.18.0.6:7421")])
        // The answer's order changing is no change.
        #expect(directory.update(["gateway": .addresses(["172.18.0.6", "172.18.0.5"])]).isEmpty)
        // One goes, another comes, in one round: retire first, then connect.
        #expect(
            directory.update(["gateway": .addresses(["172.18.0.6", "fd00::7"])])
                == [.retire("tcp://172.18.0.5:7421"), .connect("tcp://[fd00::7]:7421")])
        #expect(directory.connected == ["tcp://172.18.0.6:7421", "tcp://[fd00::7]:7421", "tcp://127.0.0.1:7424"])
    }

    @Test func aFailedLookupKeepsTheAddressesAndANameWithNoAddressRetiresThemAll() {
        var directory = PoolDirectory(endpoints: ["tcp://gateway:7421"])
        _ = directory.update(["gateway": .addresses(["172.18.0.5", "172.18.0.6"])])
        // The DNS server did not answer this time: the gateways still run.
        #expect(directory.update(["gateway": .failed("Temporary failure in name resolution")]).isEmpty)
        #expect(directory.update([:]).isEmpty)
        #expect(directory.connected.count == 2)
        // The name exists no more: every gateway under it has gone.
        #expect(
            directory.update(["gateway": .addresses([])])
                == [.retire("tcp://172.18.0.5:7421"), .retire("tcp://172.18.0.6:7421")])
        #expect(directory.connected.isEmpty)
        // And back.
        #expect(directory.update(["gateway": .addresses(["172.18.0.9"])]) == [.connect("tcp://172.18.0.9:7421")])
    }

    @Test func aNameThatHasNotAnsweredYetConnectsNothing() {
        var directory = PoolDirectory(endpoints: ["tcp://gateway:7421"])
        #expect(directory.update(["gateway": .failed("no answer")]).isEmpty)
        #expect(directory.connected.isEmpty)
    }

    @Test func anAddressReachedTwiceIsConnectedOnce() {
        var directory = PoolDirectory(endpoints: ["tcp://gateway:7421", "tcp://gateway-1:7421", "tcp://172.18.0.5:7421"])
        #expect(directory.names == ["gateway", "gateway-1"])
        let changes = directory.update([
            "gateway": .addresses(["172.18.0.5", "172.18.0.6"]), "gateway-1": .addresses(["172.18.0.5"]),
        ])
        #expect(changes == [.connect("tcp://172.18.0.5:7421"), .connect("tcp://172.18.0.6:7421")])
        // One name losing the address does not retire it while another still reaches it.
        #expect(directory.update(["gateway-1": .addresses([])]).isEmpty)
    }

    @Test func theSameAddressOnTwoPortsIsTwoPools() {
        var directory = PoolDirectory(endpoints: ["tcp://gateway:7421", "tcp://gateway:7521"])
        #expect(directory.names == ["gateway"])
        #expect(
            directory.update(["gateway": .addresses(["172.18.0.5"])])
                == [.connect("tcp://172.18.0.5:7421"), .connect("tcp://172.18.0.5:7521")])
    }
}
