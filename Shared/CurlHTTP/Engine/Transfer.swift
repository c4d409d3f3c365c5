import CCurl

/// One request inside curl: its easy handle, the header list curl reads while
/// sending, and the response as it arrives. Lives on the loop thread only;
/// curl finds it again through `CURLOPT_PRIVATE` and the callbacks through
/// their user-data pointer, both unretained: the loop's table of active
/// transfers owns it until the handle has left the multi handle.
final class Transfer {
    /// Response header bytes accepted before the transfer fails as too large.
    static let maxHeaderBytes = 64 * 1024

    let id: UInt64
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    let maxBodyBytes: Int
    /// The multi handle the transfer is in; nil before it is added and after it is removed.
    var shard: MultiShard?
    /// Its request's origin, counted in `shard` while it is there.
    var origin: Substring = ""
    private var headerBytes = 0
    private(set) var body: [UInt8] = []
    private(set) var headers: [(name: String, value: String)] = []
    /// Set when a callback refused data because of a cap: curl then reports
    /// `CURLE_WRITE_ERROR`, which this turns into `.responseTooLarge`.
    private(set) var capExceeded = false

    init(id: UInt64, easy: UnsafeMutableRawPointer, maxBodyBytes: Int) {
        self.id = id
        self.easy = easy
        self.maxBodyBytes = maxBodyBytes
    }

    /// The pointer handed to curl for this transfer.
    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static func from(_ pointer: UnsafeMutableRawPointer) -> Transfer {
        Unmanaged<Transfer>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Appends a header line for `CURLOPT_HTTPHEADER`. curl sends `Name;` as an
    /// empty header, while `Name:` would only remove one of its own.
    /// Sends `name: value`; an empty value is sent as an empty header (`name;`, curl's spelling for that).
    func addRequestHeader(name: String, value: String) {
        let line = value.isEmpty ? "\(name);" : "\(name): \(value)"
        headerList = curl_slist_append(headerList, line)
    }

    /// Stops curl from sending a header of its own (`name:` with nothing after
    /// the colon, as curl documents for CURLOPT_HTTPHEADER).
    func removeRequestHeader(name: String) {
        headerList = curl_slist_append(headerList, "\(name):")
    }

    /// The header list to give curl; it must outlive the transfer, so `release` frees it.
    var requestHeaders: UnsafeMutablePointer<curl_slist>? { headerList }

    /// Body bytes from the write callback; `false` refuses them (over the cap).
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= maxBodyBytes - body.count else {
            capExceeded = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// One raw header line from the header callback (status lines and the
    /// blank line included); `false` refuses it (over the header cap).
    func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += bytes.count
        guard headerBytes <= Self.maxHeaderBytes else {
            capExceeded = true
            return false
        }
        // Read as bytes, not Characters: grapheme-breaking a Substring per
        // header line cost about 29,000 instructions per answer (callgrind; 4,500 now).
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\r") || bytes[end - 1] == UInt8(ascii: "\n") { end -= 1 }
        let line = bytes[..<end]
        if line.starts(with: Self.statusPrefix) {
            headers.removeAll()  // a new response starts (after an interim 1xx)
        } else if let first = line.first, first == Self.space || first == Self.tab {
            // obsolete line folding: continues the previous value
            if !headers.isEmpty { headers[headers.count - 1].value += " " + Self.text(Self.trimmed(line)) }
        } else if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            headers.append((Self.text(line[..<colon]), Self.text(Self.trimmed(line[(colon + 1)...]))))
        }
        return true
    }

    /// Frees what curl needed during the transfer; the easy handle stays for reuse.
    func release() {
        curl_slist_free_all(headerList)
        headerList = nil
    }

    private static let statusPrefix = Array("HTTP/".utf8)
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    /// Without the spaces and tabs at either end.
    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        let blank: (UInt8) -> Bool = { $0 == space || $0 == tab }
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) })
        else { return bytes[bytes.startIndex..<bytes.startIndex] }
        return bytes[first...last]
    }

    private static func text(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes), as: UTF8.self)
    }
}
