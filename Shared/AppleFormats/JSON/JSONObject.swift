/// A JSON object's members: each key once, in the order first read, holding
/// the last value read for it (as JSONDecoder and `[String: JSONValue]` do).
///
/// Why a list and not a dictionary: Apple's objects have 5 to 40 members, and
/// the readers look each field up once. Hashing every key into a dictionary
/// as it was read, then hashing each looked-up name again, cost a verifier
/// about 30,000 instructions per verifyReceipt answer (callgrind); a scan
/// that compares lengths before bytes costs a fraction of that. A look-up is
/// linear in the members, so an object with very many costs more per look-up,
/// but every reader looks up a fixed set of names, and bodies are size-capped
/// before they are parsed.
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public typealias Member = (key: String, value: JSONValue)

    public private(set) var members: [Member]

    public init() { members = [] }

    /// Later keys replace earlier ones, as in JSON text.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        members = []
        for (key, value) in elements { self[key] = value }
    }

    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { (key: $0.key, value: $0.value) }
    }

    public var isEmpty: Bool { members.isEmpty }
    public var count: Int { members.count }
    public var keys: [String] { members.map(\.key) }

    public subscript(key: String) -> JSONValue? {
        get { index(of: key).map { members[$0].value } }
        set {
            switch (index(of: key), newValue) {
            case (let index?, let value?): members[index].value = value
            case (let index?, nil): members.remove(at: index)
            case (nil, let value?): members.append((key, value))
            case (nil, nil): break
            }
        }
    }

    /// Equal when they hold the same keys with equal values, in any order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.count == rhs.count && lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    private func index(of key: String) -> Int? { Self.index(of: key, in: members) }

    private static func index(of key: String, in members: [Member]) -> Int? {
        // A length is read without touching the bytes; most keys differ in it.
        let length = key.utf8.count
        return members.firstIndex { $0.key.utf8.count == length && $0.key == key }
    }

    /// `members` in the order first read, each key once with its last value;
    /// `firstRepeat`: the position in `members` of the first key read again.
    static func uniquing(_ members: some Collection<Member>) -> (object: JSONObject, firstRepeat: Int?) {
        var object = JSONObject()
        object.members.reserveCapacity(members.count)
        var firstRepeat: Int?
        var earlier = EarlierKeys(expecting: members.count)
        for (offset, member) in members.enumerated() {
            if let existing = earlier.position(of: member.key, among: object.members) {
                object.members[existing].value = member.value
                if firstRepeat == nil { firstRepeat = offset }
            } else {
                object.members.append(member)
            }
        }
        return (object, firstRepeat)
    }

    /// Finds a key among those read before it.
    private struct EarlierKeys {
        /// Past this many members, keys are found through a dictionary instead
        /// of comparing each with those before it (quadratic).
        static let scanLimit = 32

        private let hashes: Bool
        private var positions: [String: Int] = [:]
        /// Bit n set: a key of a length n (modulo 64) was read. Apple's keys mostly
        /// differ in length, so most are known new without comparing them with any other.
        private var lengthsRead: UInt64 = 0

        init(expecting count: Int) {
            hashes = count > Self.scanLimit
            if hashes { positions.reserveCapacity(count) }
        }

        /// Where `key` is in `members` (those read before it), or nil, noting it as read.
        mutating func position(of key: String, among members: [Member]) -> Int? {
            if hashes {
                if let position = positions[key] { return position }
                positions[key] = members.count
                return nil
            }
            let bit: UInt64 = 1 << UInt64(key.utf8.count & 63)
            defer { lengthsRead |= bit }
            return lengthsRead & bit == 0 ? nil : JSONObject.index(of: key, in: members)
        }
    }
}
