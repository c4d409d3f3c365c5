import SwiftProtobuf

/// Why a frame could not be read as an `Envelope`.
public struct EnvelopeDecodingError: Error, Equatable, CustomStringConvertible {
    private enum Code: Equatable { case malformed, unsupportedVersion(UInt32), missingBody }
    private let code: Code

    public static let malformed = EnvelopeDecodingError(code: .malformed)
    public static let missingBody = EnvelopeDecodingError(code: .missingBody)
    public static func unsupportedVersion(_ version: UInt32) -> EnvelopeDecodingError {
        EnvelopeDecodingError(code: .unsupportedVersion(version))
    }

    public var description: String {
        switch code {
        case .malformed: "malformed envelope"
        case .unsupportedVersion(let version): "unsupported contract version \(version)"
        case .missingBody: "envelope without a body"
        }
    }
}

extension Envelope {
    /// An envelope of the current contract version around `body`.
    public init(requestID: String, deadlineMilliseconds: Int64 = 0, body: Envelope.OneOf_Body) {
        self.init()
        self.contractVersion = ContractVersion.current
        self.requestID = requestID
        self.deadlineMs = deadlineMilliseconds
        self.body = body
    }

    /// Reads one ZeroMQ frame, refusing versions this build does not speak
    /// (0 is a peer that forgot to set it, newer ones may mean other things).
    public init(frame: [UInt8]) throws(EnvelopeDecodingError) {
        let decoded: Envelope
        do {
            decoded = try Envelope(serializedBytes: frame)
        } catch {
            throw .malformed
        }
        guard decoded.contractVersion == ContractVersion.current else {
            throw .unsupportedVersion(decoded.contractVersion)
        }
        guard decoded.body != nil else { throw .missingBody }
        self = decoded
    }

    /// The frame to send. Encoding a message built in memory cannot fail for
    /// proto3 (no required fields), so a failure is a programming error.
    public func frame() -> [UInt8] {
        do {
            return try serializedBytes()
        } catch {
            preconditionFailure("encoding an Envelope failed: \(error)")
        }
    }

    /// True when the deadline is set and has passed at `nowMilliseconds`.
    public func isExpired(nowMilliseconds: Int64) -> Bool {
        deadlineMs != 0 && nowMilliseconds >= deadlineMs
    }
}
