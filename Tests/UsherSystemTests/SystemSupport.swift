import Foundation
import Testing
import UsherSQLite
import UsherStore
import UsherTestSupport

let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The built `usher` executable, next to the test bundle.
func usherBinary() throws -> URL {
    let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [dir.appendingPathComponent("usher"), dir.deletingLastPathComponent().appendingPathComponent("usher")]
    return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "usher binary next to the tests")
}

/// A scratch folder with a bot (the seed's behaviour) and a database path.
struct Scratch {
    let dir: URL
    var db: String { dir.appendingPathComponent("usher.db").path }
    var bot: String { dir.appendingPathComponent("bot").path }

    init(rules: String = Scratch.seedRules) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-system-\(UUID().uuidString)")
        let botDir = dir.appendingPathComponent("bot")
        try FileManager.default.createDirectory(at: botDir, withIntermediateDirectories: true)
        try Data("bot: crash\nname: Crash\nrules: [rules.yaml]\nsession: {idle_reset: 24h}\n".utf8).write(to: botDir.appendingPathComponent("bot.yaml"))
        try Data(rules.utf8).write(to: botDir.appendingPathComponent("rules.yaml"))
    }

    static let seedRules = TestBot.rules

    func remove() { try? FileManager.default.removeItem(at: dir) }
}

/// Runs the usher binary with `args` to its end: its status and what it wrote on stderr (and
/// on stdout too, with `stdout`). `stopWhenItSays`: SIGTERM once its output says that (a worker
/// waiting for its store, say) — or after a minute, when it never does and will not end;
/// `directory`: where it runs.
func runUsher(_ args: [String], stdout: Bool = false, stopWhenItSays cue: String? = nil,
              in directory: URL? = nil) throws -> (status: Int32, output: String) {
    let p = Process()
    p.executableURL = try usherBinary()
    p.arguments = args
    if let directory { p.currentDirectoryURL = directory }
    let out = Pipe()
    p.standardError = out
    p.standardOutput = stdout ? out : FileHandle.nullDevice
    try p.run()
    var text = Data()
    if let cue {
        let pid = p.processIdentifier
        let stopped = Locked(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
            if !stopped.withLock({ $0 }) { kill(pid, SIGKILL) }
        }
        while !String(decoding: text, as: UTF8.self).contains(cue), let chunk = try? readChunk(out.fileHandleForReading), !chunk.isEmpty {
            text.append(chunk)
        }
        kill(pid, SIGTERM)
        p.waitUntilExit()
        stopped.withLock { $0 = true }
    }
    text.append(out.fileHandleForReading.readDataToEndOfFile())
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: text, as: UTF8.self))
}

/// What a pipe holds now (waiting until it holds something); empty at its end.
func readChunk(_ handle: FileHandle) throws -> Data {
    var data = Data(count: 1 << 16)
    while true {
        let n = data.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
        if n >= 0 {
            data.count = n
            return data
        }
        if errno != EINTR { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}

/// A worker process. Its stderr is read as it comes (by a thread of its own), so that the
/// worker never blocks on a full pipe and the test can look at its log at any moment.
final class WorkerProcess: @unchecked Sendable {
    // @unchecked: `process` is used from one test task at a time; the log is behind its lock.
    let process = Process()
    private let stderr = Pipe()
    private let captured = Locked(Data())
    private let drained = DispatchSemaphore(value: 0)

    convenience init(_ scratch: Scratch, extra: [String] = []) throws {
        try self.init(bot: scratch.bot, store: "sqlite:\(scratch.db)", extra: extra)
    }

    /// `launcher`: a command that runs the worker (`setpriv --reuid=…`, to run it as another user).
    init(bot: String, store: String, extra: [String] = [], environment: [String: String] = [:], launcher: [String] = []) throws {
        let arguments = ["run", bot, "--store", store, "--log-level", "warning"] + extra
        if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = launcher.dropFirst() + [try usherBinary().path] + arguments
        } else {
            process.executableURL = try usherBinary()
            process.arguments = arguments
        }
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new } }
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let handle = stderr.fileHandleForReading
        Thread.detachNewThread { [captured, drained] in
            while let chunk = try? readChunk(handle), !chunk.isEmpty { captured.withLock { $0.append(chunk) } }
            drained.signal()
        }
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then the exit status and how long it took. The log is whole afterwards.
    func terminate() -> (status: Int32, seconds: Double) {
        let start = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let d = ContinuousClock.now - start
        _ = drained.wait(timeout: .now() + 10)
        return (process.terminationStatus, Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
    }

    /// What the worker has written on stderr so far.
    var log: String { String(decoding: captured.withLock { $0 }, as: UTF8.self) }

    /// Returns once the log says `text` (a worker that is up, or waiting, says so); records an
    /// issue after `timeout`.
    func waitForLog(_ text: String, timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await eventually("the worker's log to say \(text)", timeout: timeout, detail: log, sourceLocation: sourceLocation) {
            log.contains(text)
        }
    }
}

/// Waits until every inbound message is done for `bot`.
func drain(_ store: any ChatStore, bot: String, timeout: Duration = .seconds(120)) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await store.pending(bot: bot, after: .start, limit: 1).messages.isEmpty { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("messages still pending after \(timeout)")
}

#if canImport(Glibc)
import Glibc
#endif
