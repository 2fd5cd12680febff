public import Foundation
import Synchronization

/// A PostgreSQL server of the test run's own: `initdb` into a temporary directory, listening on a
/// Unix socket there only (no TCP port, no system service), stopped when the process exits — or,
/// when the process was killed, by the next run that starts one (`sweepOrphans`).
/// Needs the server binaries (Debian's `postgresql` package; `make test` installs it). As root,
/// the server runs as the `postgres` user, because PostgreSQL refuses to run as root.
public final class PostgresTestServer: @unchecked Sendable {
    // @unchecked: immutable after init apart from `databases`, guarded by `lock`.
    public let directory: String
    public let user = "postgres"
    /// The port (for TCP and the socket's name) when `settings` set one, else PostgreSQL's default.
    public let port: String
    private let bin: String
    private let runAs: String?
    private let lock = NSLock()
    private var databases = 0

    /// The server shared by everything in this process, started on first use.
    public static let shared: Result<PostgresTestServer, any Error> = Result { try PostgresTestServer() }

    /// `shared`, awaited on a thread of its own: the first use runs `initdb` and starts the
    /// server (seconds), and every test asking meanwhile would otherwise hold a thread of the
    /// cooperative pool — with two cores, all of them, stalling the tests that do not need it.
    public static func ready() async throws -> PostgresTestServer {
        try await withCheckedThrowingContinuation { c in
            Thread.detachNewThread { c.resume(with: shared) }
        }
    }

    /// Starts a server. `settings` are extra `-c name=value` server settings.
    public init(settings: [String: String] = ["fsync": "off", "max_connections": "200"]) throws {
        bin = try Self.binDirectory()
        port = settings["port"] ?? "5432"
        runAs = getuid() == 0 ? "postgres" : nil
        Self.sweepOrphans(bin: bin, runAs: runAs)
        directory = try Self.makeDirectory(owner: runAs)
        try Self.write(String(getpid()), to: directory + "/owner")
        try run([bin + "/initdb", "-D", data, "-U", user, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        var options = "-k \(directory) -c listen_addresses=''"
        for (k, v) in settings.sorted(by: { $0.key < $1.key }) { options += " -c \(k)=\(v)" }
        try Self.write(options, to: directory + "/options")
        try start()
        Self.started.withLock { $0.append(self) }
        Self.registerExitHandler()
    }

    private var data: String { directory + "/data" }

    /// A `postgresql://` URL for `database` over the Unix socket.
    public func url(database: String) -> String {
        "postgresql:///\(database)?host=\(directory)&port=\(port)&user=\(user)"
    }

    /// Creates an empty database and returns its URL. `encoding` SQL_ASCII stores any bytes.
    public func createDatabase(prefix: String = "t", encoding: String = "UTF8") throws -> String {
        let name = lock.withLock { () -> String in
            databases += 1
            return "\(prefix)_\(getpid())_\(databases)"
        }
        try psql("CREATE DATABASE \(name) TEMPLATE template0 ENCODING '\(encoding)' LC_COLLATE 'C' LC_CTYPE 'C'")
        return url(database: name)
    }

    /// The database a URL of `createDatabase` names (for `psql`).
    public static func database(of url: String) -> String {
        String(url.split(separator: "?")[0].dropFirst("postgresql:///".count))
    }

    /// Runs SQL with psql against `database`; returns what it printed (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        try run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory, "-p", port, "-U", user, "-d", database,
                 "-c", sql], asServer: false)
    }

    /// Stops the server abruptly (as a crash would) and starts it again.
    public func restart(downFor pause: TimeInterval = 0) throws {
        try stop(mode: "immediate")
        if pause > 0 { Thread.sleep(forTimeInterval: pause) }
        try start()
    }

    public func start() throws {
        let options = try String(contentsOfFile: directory + "/options", encoding: .utf8)
        // The server inherits pg_ctl's stdout: send it to a file, not a pipe nobody would close.
        try run([bin + "/pg_ctl", "-D", data, "-l", directory + "/server.log", "-o", options, "-w", "-t", "60", "start"],
                quiet: true)
    }

    public func stop(mode: String = "fast") throws {
        try run([bin + "/pg_ctl", "-D", data, "-m", mode, "-w", "stop"])
    }

    /// The server's log so far (for a failing test's message).
    public var log: String { (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? "" }

    /// The binaries of the newest installed server (`pg_config --bindir`, else
    /// /usr/lib/postgresql/<n>/bin).
    public static func binDirectory() throws -> String {
        var candidates: [String] = []
        if let out = try? runProcess(["pg_config", "--bindir"]), !out.isEmpty {
            candidates.append(out.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "\(root)/\($0)/bin" }
        for c in candidates where FileManager.default.isExecutableFile(atPath: c + "/initdb") { return c }
        throw ServerError("no PostgreSQL server binaries (initdb) found; install them with "
                          + "'apt-get install postgresql' (make test does this as root)")
    }

    private static func makeDirectory(owner: String?) throws -> String {
        var template = Array("/tmp/usher-pg-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw ServerError("cannot create a temporary directory") }
        let path = String(cString: p)
        if let owner { try runProcess(["chown", owner, path]) }
        return path
    }

    @discardableResult
    private func run(_ args: [String], asServer: Bool = true, quiet: Bool = false) throws -> String {
        let command = asServer && runAs != nil ? ["runuser", "-u", runAs!, "--"] + args : args
        return try Self.runProcess(command, quiet: quiet)
    }

    /// Runs a command and returns its output. posix_spawn and waitpid, not Foundation's
    /// `Process`: `pg_ctl start` leaves a daemon behind that inherits the child's descriptors,
    /// and `Process` waits for those to close before it reports the exit.
    @discardableResult
    static func runProcess(_ args: [String], quiet: Bool = false) throws -> String {
        let outPath = "/tmp/usher-pg-out-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        defer { unlink(outPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, quiet ? "/dev/null" : outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var argv: [UnsafeMutablePointer<CChar>?] = (["/usr/bin/env"] + args).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/usr/bin/env", &actions, nil, &argv, environ)
        guard rc == 0 else { throw ServerError("cannot start \(args[0]): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw ServerError("\(args.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }

    private static func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        _ = chmod(path, 0o644)
    }

    // MARK: stopping at exit

    /// Stops and removes the servers of earlier runs whose process is gone: one killed from
    /// outside (SIGKILL, a `timeout`) runs no exit handler, and its server would run on. A
    /// directory counts as one of those when its `owner` file names a process that no longer
    /// exists; any other (a live run's, one without the file) is left alone.
    package static func sweepOrphans(in root: String = "/tmp", bin: String, runAs: String?) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: root) else { return }
        func gone(_ pid: pid_t) -> Bool { pid > 0 && kill(pid, 0) != 0 && errno == ESRCH }
        for name in names where name.hasPrefix("usher-pg-") {
            let dir = root + "/" + name
            // A command's output file (`runProcess`) of a run that was killed before removing it.
            if name.hasPrefix("usher-pg-out-") {
                if let pid = name.split(separator: "-").dropFirst(3).first.flatMap({ pid_t($0) }), gone(pid) {
                    unlink(dir)
                }
                continue
            }
            guard let text = try? String(contentsOfFile: dir + "/owner", encoding: .utf8),
                  let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), gone(pid) else { continue }
            if FileManager.default.fileExists(atPath: dir + "/data/postmaster.pid") {
                let stop = [bin + "/pg_ctl", "-D", dir + "/data", "-m", "immediate", "-w", "stop"]
                _ = try? runProcess(runAs.map { ["runuser", "-u", $0, "--"] + stop } ?? stop, quiet: true)
            }
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    private static let started = Mutex<[PostgresTestServer]>([])
    private static let registered = Mutex(false)

    private static func registerExitHandler() {
        let first = registered.withLock { r -> Bool in defer { r = true }; return !r }
        if first { atexit { PostgresTestServer.stopAll() } }
    }

    private static func stopAll() {
        for s in started.withLock({ $0 }) {
            try? s.stop(mode: "immediate")
            try? FileManager.default.removeItem(atPath: s.directory)
        }
    }

    public struct ServerError: Error, CustomStringConvertible {
        public var description: String
        init(_ d: String) { description = d }
    }
}
