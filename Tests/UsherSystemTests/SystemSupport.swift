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
/// on stdout too, with `stdout`). `stopAfter`: SIGTERM after that long (a worker, say);
/// `directory`: where it runs.
func runUsher(_ args: [String], stdout: Bool = false, stopAfter: Duration? = nil, in directory: URL? = nil) throws -> (status: Int32, output: String) {
    let p = Process()
    p.executableURL = try usherBinary()
    p.arguments = args
    if let directory { p.currentDirectoryURL = directory }
    let out = Pipe()
    p.standardError = out
    p.standardOutput = stdout ? out : FileHandle.nullDevice
    try p.run()
    if let stopAfter {
        Thread.sleep(forTimeInterval: Double(stopAfter.components.seconds) + Double(stopAfter.components.attoseconds) / 1e18)
        kill(p.processIdentifier, SIGTERM)
    }
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    return (p.terminationStatus, text)
}

/// A worker process.
final class WorkerProcess: @unchecked Sendable {
    // @unchecked: used from one test task at a time.
    let process = Process()
    let stderr = Pipe()

    convenience init(_ scratch: Scratch, extra: [String] = []) throws {
        try self.init(bot: scratch.bot, store: "sqlite:\(scratch.db)", extra: extra)
    }

    init(bot: String, store: String, extra: [String] = []) throws {
        process.executableURL = try usherBinary()
        process.arguments = ["run", bot, "--store", store, "--log-level", "warning"] + extra
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then the exit status and how long it took.
    func terminate() -> (status: Int32, seconds: Double) {
        let start = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let d = ContinuousClock.now - start
        return (process.terminationStatus, Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
    }

    var log: String { String(decoding: stderr.fileHandleForReading.availableData, as: UTF8.self) }
}

/// Polls until `condition` holds; after `timeout` records an issue naming `what` (and `detail`:
/// a worker's log, say).
func eventually(_ what: String, timeout: Duration = .seconds(20), detail: @autoclosure () -> String = "",
                sourceLocation: SourceLocation = #_sourceLocation, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out waiting for: \(what)\n\(detail())", sourceLocation: sourceLocation)
}

/// Waits until every inbound message is done for `bot`.
func drain(_ store: any ChatStore, bot: String, timeout: Duration = .seconds(120)) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await store.pending(bot: bot, after: 0, limit: 1).isEmpty { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("messages still pending after \(timeout)")
}

#if canImport(Glibc)
import Glibc
#endif
