#if canImport(Glibc)
import Glibc
#endif
internal import CSQLite
import Foundation
import Testing
import UsherEngine
import UsherSQLite
import UsherStore
import UsherTestSupport

/// Faults injected under a real worker process on a real SQLite file: the file read-only at the
/// start, then made writable; the file deleted; the disk full; the write lock held by another
/// connection. For each, the worker mends by itself and answers every message once, or exits
/// non-zero for a supervisor to start it again; while it cannot work, `/readyz` and `/healthz`
/// say 503 and why. Counted in the rows afterwards: every conversation has exactly its one reply.
@Suite("Store faults (SQLite)", .serialized)
struct StoreFaultTests {
    /// The conversations each test writes one customer message to, before or during the fault.
    static func conversations(_ prefix: String, _ n: Int = 20) -> [String] { (0..<n).map { "\(prefix)\($0)" } }

    static func append(_ conversations: [String], to store: SQLiteStore) async throws {
        for c in conversations { try await store.append(NewMessage(id: "\(c)-m", conversationID: c, from: .customer, text: "hello")) }
    }

    /// 0 lost, 0 doubled: each conversation holds its message and the one reply the seed's first
    /// rule gives ("one"), nothing else.
    static func expectEachAnsweredOnce(_ conversations: [String], in store: SQLiteStore,
                                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var wrong: [String] = []
        for c in conversations {
            let texts = try await store.transcript(conversation: c).map(\.text)
            if texts != ["hello", "one"] { wrong.append("\(c): \(texts)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of \(conversations.count) conversations: \(wrong.prefix(5))",
                sourceLocation: sourceLocation)
    }

    /// Bot replies written in `conversations` so far.
    static func replies(_ conversations: [String], in store: SQLiteStore) async throws -> Int {
        var n = 0
        for c in conversations { n += try await store.transcript(conversation: c).filter { $0.from == .bot }.count }
        return n
    }

    /// Waits until `/readyz` and `/healthz` both answer 503 naming `code` (the store's error).
    static func waitUntilFailing(_ port: Int, _ code: String, _ worker: WorkerProcess,
                                 sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await eventually("/readyz and /healthz to say 503 with \(code)", timeout: .seconds(120), detail: worker.log,
                             sourceLocation: sourceLocation) {
            let ready = HTTPGet.get(port, "/readyz"), health = HTTPGet.get(port, "/healthz")
            return ready.status == 503 && ready.body.contains(code) && health.status == 503 && health.body.contains(code)
        }
    }

    static func waitUntilReady(_ port: Int, _ worker: WorkerProcess, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await eventually("/readyz to say ready", timeout: .seconds(120), detail: worker.log, sourceLocation: sourceLocation) {
            HTTPGet.get(port, "/readyz") == (200, "ready\n") && HTTPGet.get(port, "/healthz") == (200, "ok\n")
        }
    }

    /// Once the fault is mended: the worker answers everything, says ready again, has said the
    /// failure (`code`) and the recovery once each, and stops cleanly; then the rows are counted
    /// and `store` closed.
    static func expectRecovered(_ worker: WorkerProcess, _ port: Int, from code: String, _ conversations: [String],
                                in store: SQLiteStore, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await drain(store, bot: "crash")
        try await waitUntilReady(port, worker, sourceLocation: sourceLocation)
        let log = worker.log
        #expect(count(log, event: "store-error", code: code) == 1, "said once, not per retry:\n\(log)", sourceLocation: sourceLocation)
        #expect(count(log, event: "store-recovered") == 1, "\(log)", sourceLocation: sourceLocation)
        #expect(worker.terminate().status == 0, sourceLocation: sourceLocation)
        try await expectEachAnsweredOnce(conversations, in: store, sourceLocation: sourceLocation)
        try await store.close()
    }

    /// Lines of the worker's log with `event` and `code`.
    static func count(_ log: String, event: String, code: String? = nil) -> Int {
        log.split(separator: "\n").filter { $0.contains("event=\(event) ") && (code == nil || $0.contains("code=\(code!) ")) }.count
    }

    // MARK: - Read-only, then writable

    @Test func readOnlyAtStartThenWritable() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        // As root every file is writable: the worker runs as nobody then, on a file it does not own.
        let root = getuid() == 0
        var launcher: [String] = []
        if root {
            launcher = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
            guard FileManager.default.isExecutableFile(atPath: launcher[0]),
                  (try? runProcess(launcher + [try usherBinary().path, "--version"])) == 0 else {
                skip("running as root, and the usher binary cannot be run as nobody through setpriv")
                return
            }
            #expect(chmod(scratch.dir.path, 0o777) == 0)
        }
        let ids = Self.conversations("ro")
        let store = try await SQLiteStore(path: scratch.db)
        try await Self.append(ids, to: store)
        try await store.close()   // the last connection: -wal and -shm go, the worker makes its own
        // Owned by the worker's user, without write permission: what the owner mends with chmod
        // (as root, SQLite gives the -wal and -shm files it creates the database file's owner).
        if root { #expect(chown(scratch.db, 65534, 65534) == 0) }
        #expect(chmod(scratch.db, 0o444) == 0)

        let port = try Loopback.freePort()
        let worker = try WorkerProcess(bot: scratch.bot, store: "sqlite:\(scratch.db)",
                                       extra: ["--metrics", "127.0.0.1:\(port)", "--log-level", "info"], launcher: launcher)
        defer { if worker.process.isRunning { worker.kill9() } }
        try await Self.waitUntilFailing(port, "sqlite-readonly", worker)
        let check = try await SQLiteStore(path: scratch.db)
        #expect(try await Self.replies(ids, in: check) == 0)

        #expect(chmod(scratch.db, 0o644) == 0)
        try await Self.expectRecovered(worker, port, from: "sqlite-readonly", ids, in: check)
    }

    // MARK: - Deleted

    @Test func databaseFileDeleted() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let before = Self.conversations("old", 5), after = Self.conversations("new", 5)
        let store = try await SQLiteStore(path: scratch.db)
        try await Self.append(before, to: store)
        let port = try Loopback.freePort()
        let worker = try WorkerProcess(scratch, extra: ["--metrics", "127.0.0.1:\(port)"])
        defer { if worker.process.isRunning { worker.kill9() } }
        try await drain(store, bot: "crash")
        try await Self.expectEachAnsweredOnce(before, in: store)
        try await store.close()
        try await Self.waitUntilReady(port, worker)

        // `rm usher.db*`, then a backend writes to the path again: a new file.
        for suffix in ["", "-wal", "-shm"] { unlink(scratch.db + suffix) }
        let fresh = try await SQLiteStore(path: scratch.db)
        try await Self.append(after, to: fresh)

        // The worker notices, says so, and exits non-zero rather than answer into the old file.
        try await eventually("the worker to exit", timeout: .seconds(120), detail: worker.log) { !worker.process.isRunning }
        let status = worker.terminate().status
        #expect(status != 0, "exit status \(status)")
        #expect(worker.log.contains("code=sqlite-file-replaced"), "\(worker.log)")

        // What a supervisor does next: start it again. It answers the new file's messages once.
        let restarted = try WorkerProcess(scratch)
        defer { if restarted.process.isRunning { restarted.kill9() } }
        try await drain(fresh, bot: "crash")
        #expect(restarted.terminate().status == 0)
        try await Self.expectEachAnsweredOnce(after, in: fresh)
        try await fresh.close()
    }

    // MARK: - Disk full

    @Test func diskFull() async throws {
        guard getuid() == 0 else {
            skip("the disk-full test mounts a small tmpfs, which needs root")
            return
        }
        let scratch = try Scratch()
        defer { scratch.remove() }
        let disk = scratch.dir.appendingPathComponent("disk").path
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        guard try runProcess(["/bin/mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", disk]) == 0 else {
            skip("cannot mount a tmpfs at \(disk) (no CAP_SYS_ADMIN in this container?)")
            return
        }
        defer { _ = try? runProcess(["/bin/umount", "-l", disk]) }
        let db = disk + "/usher.db"
        let ids = Self.conversations("full")
        // This store stays open: the -wal and -shm files stay, so the worker opens on a full disk
        // and fails only when it writes.
        let store = try await SQLiteStore(path: db)
        try await Self.append(ids, to: store)
        let filler = disk + "/filler"
        try Self.fill(filler)

        let port = try Loopback.freePort()
        let worker = try WorkerProcess(bot: scratch.bot, store: "sqlite:\(db)", extra: ["--metrics", "127.0.0.1:\(port)", "--log-level", "info"])
        defer { if worker.process.isRunning { worker.kill9() } }
        try await Self.waitUntilFailing(port, "sqlite-full", worker)
        #expect(try await Self.replies(ids, in: store) == 0)

        #expect(unlink(filler) == 0)
        try await Self.expectRecovered(worker, port, from: "sqlite-full", ids, in: store)
    }

    /// Writes zeros to `path` until the file system says it is full.
    static func fill(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw LoopbackError("cannot create \(path) (errno \(errno))") }
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 {
                guard errno == ENOSPC else { throw LoopbackError("writing \(path): errno \(errno)") }
                return
            }
        }
    }

    // MARK: - Lock held

    @Test func writeLockHeldByAnotherConnection() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let ids = Self.conversations("lock")
        let store = try await SQLiteStore(path: scratch.db)
        try await Self.append(ids, to: store)
        // Another connection takes the write lock and keeps it until the worker has failed a few
        // times: as a long migration or a stuck backend would. A short busy timeout on the worker
        // (busy_timeout_ms) brings the failures sooner, nothing else.
        var holder: OpaquePointer?
        #expect(sqlite3_open_v2(scratch.db, &holder, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK)
        #expect(sqlite3_exec(holder, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        var held = true
        defer { if held { sqlite3_exec(holder, "ROLLBACK", nil, nil, nil) }; sqlite3_close_v2(holder) }

        let port = try Loopback.freePort()
        let worker = try WorkerProcess(bot: scratch.bot, store: "sqlite:\(scratch.db)?busy_timeout_ms=50",
                                       extra: ["--metrics", "127.0.0.1:\(port)", "--log-level", "info"])
        defer { if worker.process.isRunning { worker.kill9() } }
        try await Self.waitUntilFailing(port, "busy", worker)
        try await eventually("three failures", timeout: .seconds(120), detail: worker.log) {
            HTTPGet.metric(port, "usher_store_errors_total{bot=\"crash\",code=\"busy\"}") ?? 0 >= 3
        }
        #expect(try await Self.replies(ids, in: store) == 0)

        #expect(sqlite3_exec(holder, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        held = false
        try await Self.expectRecovered(worker, port, from: "busy", ids, in: store)
    }
}

/// Says on stderr why a test did not run its checks (printed at once, whatever buffers stdout).
func skip(_ why: String) {
    FileHandle.standardError.write(Data("skipped: \(why)\n".utf8))
}

/// Runs a command to its end; its exit status.
func runProcess(_ command: [String]) throws -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: command[0])
    p.arguments = Array(command.dropFirst())
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    return p.terminationStatus
}

/// HTTP/1.0 GETs to the worker's metrics server on 127.0.0.1, over a plain socket.
enum HTTPGet {
    /// The status and body; status 0 when nothing answers.
    static func get(_ port: Int, _ path: String) -> (status: Int, body: String) {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { return (0, "") }
        defer { close(s) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return (0, "") }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(s, $0.baseAddress, $0.count, 0) }) == request.count else { return (0, "") }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(s, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        let text = String(decoding: response, as: UTF8.self)
        guard let head = text.range(of: "\r\n\r\n") else { return (0, "") }
        let status = text[..<head.lowerBound].split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, String(text[head.upperBound...]))
    }

    /// One sample of `/metrics` (`name{labels}` as rendered), or nil.
    static func metric(_ port: Int, _ series: String) -> Double? {
        for line in get(port, "/metrics").body.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}
