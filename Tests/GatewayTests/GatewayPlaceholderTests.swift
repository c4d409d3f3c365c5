import Testing

@testable import Gateway

@Test func gatewayExecutableName() {
    #expect(GatewayApplication.executableName == "storekeeper-gateway")
}
