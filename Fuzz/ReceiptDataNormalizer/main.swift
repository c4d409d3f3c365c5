import Foundation

// libFuzzer entry for the receipt normalizer: any text, and it returns
// strict base64 or throws. What it returns is canonical: normalizing it again
// changes nothing, and it decodes as base64. A violation traps (a finding).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReceiptDataNormalizer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let normalized = try? ReceiptDataNormalizer.normalize(text) else { return 0 }
    precondition(Data(base64Encoded: normalized) != nil, "normalized receipt is not base64")
    precondition((try? ReceiptDataNormalizer.normalize(normalized)) == normalized, "normalizing is not idempotent")
    return 0
}
