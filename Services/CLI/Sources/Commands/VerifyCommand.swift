import ArgumentParser
import Foundation

/// `storekeeper verify FILE --user U`: posts a saved receipt to the gateway,
/// as an app backend would, and shows what was granted.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Verify a receipt file for a user and record it (POST /v1/receipts).")

    @OptionGroup var target: GatewayTarget
    @Argument(help: "A file holding the base64 receipt (- for standard input).") var file: String
    @Option(help: "The app's user id.") var user: String
    @Option(help: "The product the client believes it bought (checked).") var product: String?
    @Option(help: "The client's transaction id (the answer says whether the receipt holds it).") var transaction: String?
    @Flag(help: "Print the gateway's JSON answer as is.") var json = false

    func run() async throws {
        let contents: Data
        do {
            contents = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError("cannot read \(file): \(error.localizedDescription)")
        }
        // The gateway repairs the receipt's encoding; only the file's own surrounding whitespace goes here.
        let receipt = String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !receipt.isEmpty else { throw ValidationError("\(file) is empty") }
        var body: [String: Any] = ["user_id": user, "receipt_data": receipt]
        if let product { body["product_id"] = product }
        if let transaction { body["transaction_id"] = transaction }
        let data = try await CommandFailure.reporting { try await target.client.post(["v1", "receipts"], json: body) }
        if json {
            print(String(decoding: data, as: UTF8.self))
        } else {
            AnswerText.receipt(try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]).forEach { print($0) }
        }
    }
}
