import ArgumentParser
import Foundation

/// `storekeeper entitlements USER`: what a user owns now, through the gateway.
struct EntitlementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements", abstract: "Show what a user owns now (GET /v1/users/USER/entitlements).")

    @OptionGroup var target: GatewayTarget
    @Argument(help: "The app's user id.") var user: String
    @Flag(help: "Print the gateway's JSON answer as is.") var json = false

    func run() async throws {
        let data = try await CommandFailure.reporting { try await target.client.get(["v1", "users", user, "entitlements"]) }
        if json {
            print(String(decoding: data, as: UTF8.self))
            return
        }
        let answer = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        print("entitlements of \(answer["user_id"] as? String ?? user):")
        AnswerText.entitlements(answer["entitlements"] as? [[String: Any]] ?? []).forEach { print($0) }
    }
}
