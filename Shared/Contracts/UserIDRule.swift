/// The spec's rule for an app's user id, checked by the gateway at the edge and
/// by the ledger before anything is written: 1-128 characters, none of them a
/// control character.
public enum UserIDRule {
    /// The message of a refusal (it names the rule, never the id).
    public static let requirement = "user_id must be 1-128 printable characters"

    public static func accepts(_ userID: String) -> Bool {
        // Nearly every id is printable ASCII: one byte is one character and
        // none is a control, so the bytes answer without grapheme breaking.
        let bytes = userID.utf8
        if bytes.allSatisfy({ (0x20...0x7E).contains($0) }) { return (1...128).contains(bytes.count) }
        return (1...128).contains(userID.count)
            && !userID.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    }
}
