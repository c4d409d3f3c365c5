extension KeyedDecodingContainer {
    /// One of Apple's ids (`transaction_id`): a string, as Apple writes them,
    /// or a number, as some clients send them.
    func decodeAppleIDIfPresent(forKey key: Key) throws -> String? {
        if let number = try? decodeIfPresent(Int64.self, forKey: key) { return String(number) }
        return try decodeIfPresent(String.self, forKey: key)
    }
}
