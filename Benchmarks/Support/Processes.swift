// What every benchmark needs to run the real executables.
import Foundation
import ProcessSpawn

/// `count` distinct free loopback ports (each probe socket stays open until all
/// are chosen, or the kernel could hand the same port out twice).
public func freePorts(_ count: Int) -> [Int] {
    var sockets: [Int32] = []
    defer { sockets.forEach { close($0) } }
    return (0..<count).map { _ in
        let (fd, port) = probePort()
        sockets.append(fd)
        return port
    }
}

public func freePort() -> Int { freePorts(1)[0] }

private func probePort() -> (Int32, Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// Starts `executable` from `binDir` with `environment` (over a plain PATH and warning-level logs).
public func start(_ executable: String, _ environment: [String: String], binDir: String) throws -> SpawnedProcess {
    try spawn(
        URL(fileURLWithPath: binDir).appendingPathComponent(executable).path,
        environment: ["PATH": "/usr/bin:/bin", "STOREKEEPER_LOG_LEVEL": "warning"].merging(environment) { $1 })
}

/// Starts `path`; what it prints goes to this process's standard error, so the figures on
/// standard output stay apart (a failed write loses the lines, never the run). In a process
/// group of its own, so a Ctrl-C reaches only the benchmark, which stops its children in order.
/// Not Foundation's `Process`: `SpawnedProcess` says why (a load generator holding thousands of
/// sockets is where `Process.run()` crashes).
public func spawn(_ path: String, arguments: [String] = [], environment: [String: String]) throws -> SpawnedProcess {
    try SpawnedProcess(path: path, arguments: arguments, environment: environment, ownProcessGroup: true) { output in
        try? FileHandle.standardError.write(contentsOf: output)
    }
}

/// Resident memory of a process in KiB (Linux /proc).
public func residentKiB(_ pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return 0 }
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}


/// CPU time (user + system) a process has used so far, in seconds (Linux /proc).
public func cpuSeconds(_ pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return 0 }
    // Fields after the command name: state is field 3, utime 14, stime 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Peak resident memory of a process so far in KiB (Linux /proc VmHWM).
public func peakResidentKiB(_ pid: Int32) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
}

/// Context switches (voluntary and not) of every thread of a process so far (Linux /proc):
/// each is a thread that went to sleep or was put aside, so their count per request says how
/// often a request's path waits for another thread.
public func contextSwitches(_ pid: Int32) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.reduce(0) { total, task in
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else {
            return total
        }
        return total + status.split(separator: "\n")
            .filter { $0.hasPrefix("voluntary_ctxt_switches:") || $0.hasPrefix("nonvoluntary_ctxt_switches:") }
            .compactMap { Int($0.split(separator: "\t").last ?? "") }
            .reduce(0, +)
    }
}

/// CPU seconds of every process whose command is `name` (PostgreSQL's backends, say), by pid.
public func cpuSecondsOfProcesses(named name: String) -> [Int32: Double] {
    let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
    var seconds: [Int32: Double] = [:]
    for pid in pids {
        guard let command = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
            command.trimmingCharacters(in: .whitespacesAndNewlines) == name
        else { continue }
        seconds[pid] = cpuSeconds(pid)
    }
    return seconds
}

/// What those processes used between two readings (a process started since counts from zero).
public func cpuSecondsUsed(from before: [Int32: Double], to after: [Int32: Double]) -> Double {
    after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
}

/// `pid` and every process below it (a server's forked workers), from each process's parent in /proc.
public func processTree(_ pid: Int32) -> [Int32] {
    var children: [Int32: [Int32]] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
        guard let child = Int32(entry),
            let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        // After the command name: state, then the parent's pid.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        if fields.count > 1, let parent = Int32(fields[1]) { children[parent, default: []].append(child) }
    }
    var tree = [pid]
    var index = 0
    while index < tree.count {
        tree += children[tree[index]] ?? []
        index += 1
    }
    return tree
}
