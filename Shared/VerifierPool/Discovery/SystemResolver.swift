import OSThread
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `getaddrinfo`, thinly: every IPv4 and IPv6 address of a name, in the
/// resolver's order, without duplicates.
///
/// `getaddrinfo` blocks (for seconds when a DNS server does not answer), so
/// each lookup runs on a thread of its own, never on Swift's cooperative
/// pool. A cancelled caller gets `.failed` at once; the thread finishes its
/// lookup and its answer is dropped.
public struct SystemResolver: AddressResolver {
    public init() {}

    public func resolve(_ host: String) async -> Resolution {
        let answer = OneAnswer()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Resolution, Never>) in
                guard answer.wait(continuation) else { return }
                let started = OSThread.start(name: "getaddrinfo") { answer.give(Self.lookup(host)) }
                if !started { answer.give(.failed("no thread for the lookup")) }
            }
        } onCancel: {
            answer.give(.failed("cancelled"))
        }
    }

    /// The blocking lookup. A name that does not exist (`EAI_NONAME`) or has
    /// no address (`EAI_NODATA`) resolves to no address; other failures
    /// (`EAI_AGAIN`: no answer from the DNS server) are `.failed`.
    static func lookup(_ host: String) -> Resolution {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        // One entry per address, not one per socket type.
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else {
            if status == EAI_NONAME || status == noData { return .addresses([]) }
            return .failed(String(cString: gai_strerror(status)))
        }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            if let address = text(of: current.pointee), !addresses.contains(address) { addresses.append(address) }
            entry = current.pointee.ai_next
        }
        return .addresses(addresses)
    }

    /// glibc's `EAI_NODATA` ("no address associated with hostname"), which
    /// Swift does not import on every platform.
    private static let noData: Int32 = -5

    private static func text(of info: addrinfo) -> String? {
        guard let socketAddress = info.ai_addr else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written: UnsafePointer<CChar>?
        switch info.ai_family {
        case AF_INET:
            written = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafePointer(to: v4.pointee.sin_addr) { inet_ntop(AF_INET, $0, &buffer, socklen_t(buffer.count)) }
            }
        case AF_INET6:
            written = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafePointer(to: v6.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &buffer, socklen_t(buffer.count)) }
            }
        default:
            return nil
        }
        guard written != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The one answer a lookup gives its caller: the thread's, or `.failed` on
/// cancellation, whichever comes first.
private final class OneAnswer: Sendable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Resolution, Never>)
        case answered(Resolution)
        case done
    }

    private let state = Mutex(State.idle)

    /// Hands over the continuation; false (and resumed already) when the answer came first.
    func wait(_ continuation: CheckedContinuation<Resolution, Never>) -> Bool {
        let early: Resolution? = state.withLock { state in
            if case .answered(let answer) = state {
                state = .done
                return answer
            }
            state = .waiting(continuation)
            return nil
        }
        guard let early else { return true }
        continuation.resume(returning: early)
        return false
    }

    func give(_ answer: Resolution) {
        let waiting: CheckedContinuation<Resolution, Never>? = state.withLock { state in
            switch state {
            case .idle:
                state = .answered(answer)
                return nil
            case .waiting(let continuation):
                state = .done
                return continuation
            case .answered, .done:
                return nil
            }
        }
        waiting?.resume(returning: answer)
    }
}
