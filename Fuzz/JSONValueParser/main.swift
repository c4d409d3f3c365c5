// libFuzzer entry for Apple's answers: any bytes, and the parser returns or
// throws; no crash, no hang, no unbounded allocation (scripts/fuzz.sh sets
// the limits). Built with swiftc from the parser's own files (scripts/fuzz.sh).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONValueParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? JSONValueParser.parse(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
