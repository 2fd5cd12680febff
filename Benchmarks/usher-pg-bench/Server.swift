import Foundation
import UsherPostgresTestServer

/// The benchmark's own PostgreSQL server (fsync on: what a deployment runs), and the client
/// programs the benchmark drives against it: psql for set-up and statistics, pgbench for the
/// ceiling.
final class BenchServer: @unchecked Sendable {
    // @unchecked: immutable after init.
    let server: PostgresTestServer
    let bin: String

    /// Every setting given to the server besides initdb's defaults. `pg_stat_statements` gives
    /// the per-statement profile of both sides; `track_commit_timestamp` the commit time of every
    /// row, so latency is measured from one commit to the other on the server's clock.
    static let settings: [String: String] = [
        "max_connections": "200",
        "shared_preload_libraries": "pg_stat_statements",
        "track_commit_timestamp": "on",
    ]

    init(extra: [String: String] = [:]) throws {
        server = try PostgresTestServer(settings: Self.settings.merging(extra) { $1 })
        bin = try PostgresTestServer.binDirectory()
        try psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        if ProcessInfo.processInfo.environment["USHER_PG_BENCH_LOG_STATEMENTS"] != nil {
            // Checking the ceiling's values against the store's: every statement and its
            // parameters into the server log, with the database name.
            try psql("ALTER SYSTEM SET log_statement = 'all'")
            try psql("ALTER SYSTEM SET log_line_prefix = '%m [%p] %d '")
            try psql("SELECT pg_reload_conf()")
        }
    }

    func url(_ database: String) -> String { server.url(database: database) }

    /// The program `name` of the server's installation (pgbench, psql), else from PATH.
    func program(_ name: String) -> String {
        let path = bin + "/" + name
        return FileManager.default.isExecutableFile(atPath: path) ? path : name
    }

    /// Runs SQL with psql (from a file, so statements of any size pass); returns its output,
    /// unaligned, tab-separated, tuples only.
    @discardableResult
    func psql(_ sql: String, database: String = "postgres") throws -> String {
        let file = NSTemporaryDirectory() + "usher-pg-bench-\(getpid())-\(UUID().uuidString).sql"
        try sql.write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let (status, out) = try Shell.run([program("psql"), "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
                                           "-h", server.directory, "-U", server.user, "-d", database, "-f", file])
        guard status == 0 else { throw BenchError("psql failed (\(status)): \(out)\nSQL: \(sql.prefix(300))") }
        return out
    }

    /// The value of a one-row, one-column query.
    func value(_ sql: String, database: String = "postgres") throws -> String {
        try psql(sql, database: database).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A fresh copy of `template` (no connections may be open on it; stragglers are ended).
    func copy(_ template: String, to name: String) throws {
        try psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        var attempt = 0
        while true {
            attempt += 1
            do {
                try psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(template)' AND pid <> pg_backend_pid()")
                try psql("CREATE DATABASE \(name) TEMPLATE \(template)")
                return
            } catch where attempt < 5 {
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }

    func drop(_ name: String) {
        _ = try? psql("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// A checkpoint, so that every measured run starts with clean shared buffers to write.
    func checkpoint() throws { try psql("CHECKPOINT") }

    /// `SHOW` of the settings that matter for a write benchmark, for the record.
    func describeSettings() throws -> String {
        let names = ["server_version", "fsync", "synchronous_commit", "wal_sync_method", "full_page_writes",
                     "shared_buffers", "wal_buffers", "max_wal_size", "checkpoint_timeout", "commit_delay",
                     "max_connections", "track_commit_timestamp", "shared_preload_libraries"]
        let sql = names.map { "SELECT '\($0)', current_setting('\($0)');" }.joined(separator: "\n")
        return try psql(sql).split(separator: "\n").map { $0.replacingOccurrences(of: "\t", with: "=") }
            .joined(separator: ", ")
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

enum Shell {
    /// Runs a program to completion; returns its exit status and its output (stdout and stderr).
    static func run(_ args: [String], environment: [String: String]? = nil) throws -> (Int32, String) {
        let out = NSTemporaryDirectory() + "usher-pg-bench-out-\(getpid())-\(UUID().uuidString)"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        defer { unlink(out) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        p.standardOutput = handle
        p.standardError = handle
        p.standardInput = FileHandle.nullDevice
        if let environment { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        try p.run()
        p.waitUntilExit()
        try handle.close()
        let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        return (p.terminationStatus, text)
    }
}

/// CPU seconds (user + system) used so far by this process, or by its finished children.
func cpuSeconds(children: Bool = false) -> Double {
    var u = rusage()
    getrusage(children ? RUSAGE_CHILDREN.rawValue : RUSAGE_SELF.rawValue, &u)
    return Double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + Double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6
}

/// CPU seconds the whole machine has spent so far (/proc/stat, over all cores): busy (user,
/// nice, system, irq, softirq; guest time is inside user), and stolen by the hypervisor for
/// others while this machine's cores had work.
func machineSeconds() -> (busy: Double, stolen: Double) {
    guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
          let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else { return (.nan, .nan) }
    let t = line.split(separator: " ").dropFirst().map { Double($0) ?? 0 }
    guard t.count >= 8 else { return (.nan, .nan) }
    let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
    return ((t[0] + t[1] + t[2] + t[5] + t[6]) / hz, t[7] / hz)
}

/// Seconds so far in which some runnable task of this machine waited for a core
/// (/proc/pressure/cpu, "some"; nan without PSI).
func cpuPressureSeconds() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/pressure/cpu", encoding: .utf8),
          let some = text.split(separator: "\n").first(where: { $0.hasPrefix("some ") }),
          let total = some.split(separator: " ").first(where: { $0.hasPrefix("total=") }) else { return .nan }
    return (Double(total.dropFirst(6)) ?? .nan) / 1e6
}

/// Context switches of this process so far (voluntary and not).
func contextSwitches() -> Int {
    var u = rusage()
    getrusage(RUSAGE_SELF.rawValue, &u)
    return Int(u.ru_nvcsw + u.ru_nivcsw)
}

func fmt(_ x: Double, _ digits: Int = 0) -> String {
    let s = String(format: "%.\(digits)f", x)
    guard digits == 0, abs(x) >= 10_000 else { return s }
    // Thousands separators for large whole numbers.
    var out = ""
    for (i, ch) in s.reversed().enumerated() {
        if i > 0, i % 3 == 0, ch != "-" { out.append(",") }
        out.append(ch)
    }
    return String(out.reversed())
}

extension BenchServer {
    /// CPU seconds (user + system) the server has used so far: the postmaster, its live
    /// processes (backends, WAL writer, checkpointer, …) and those that ended (reaped by the
    /// postmaster); `endedOnly`: those that ended alone — a client's backend once it has
    /// disconnected, without the background processes. From /proc, as the server runs on this
    /// machine.
    func serverCPUSeconds(endedOnly: Bool = false) -> Double {
        guard let pidText = try? String(contentsOfFile: server.directory + "/data/postmaster.pid", encoding: .utf8),
              let first = pidText.split(separator: "\n").first, let postmaster = Int(first) else { return .nan }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        /// Fields after the command: [0] state, [1] ppid, … [11] utime, [12] stime, [13] cutime, [14] cstime.
        func fields(_ pid: String) -> [Substring]? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            return stat[stat.index(after: close)...].split(separator: " ")
        }
        guard let main = fields(String(postmaster)), main.count > 14 else { return .nan }
        var total = (endedOnly ? 13...14 : 11...14).reduce(0.0) { $0 + (Double(main[$1]) ?? 0) }
        if endedOnly { return total / ticks }
        for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where pid.first?.isNumber == true {
            guard let f = fields(pid), f.count > 12, Int(f[1]) == postmaster else { continue }
            total += (Double(f[11]) ?? 0) + (Double(f[12]) ?? 0)
        }
        return total / ticks
    }
}
