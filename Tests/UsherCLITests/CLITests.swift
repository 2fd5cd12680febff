import Foundation
import Testing

/// Runs the built `usher` like a user does and compares what it prints with checked-in
/// snapshots (Tests/UsherCLITests/Snapshots/NAME.txt). `UPDATE_SNAPSHOTS=1 swift test` rewrites
/// them; review the diff before committing.
struct CLICase: Sendable, CustomTestStringConvertible {
    let snapshot: String
    let args: [String]
    let exit: Int32
    var testDescription: String { "usher " + args.joined(separator: " ") }
}

let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

let cliCases: [CLICase] = [
    CLICase(snapshot: "help", args: ["--help"], exit: 0),
    CLICase(snapshot: "check-support", args: ["check", "bots/support"], exit: 0),
    CLICase(snapshot: "check-misspelt-key", args: ["check", "examples/broken/misspelt-key.yaml"], exit: 1),
    CLICase(snapshot: "check-all-broken", args: ["check", "examples/broken"], exit: 1),
    CLICase(snapshot: "check-json", args: ["check", "--format", "json", "examples/broken/duplicate-id.yaml"], exit: 1),
    CLICase(snapshot: "check-mapping", args: ["check", "examples/mapping/helpdesk.yaml"], exit: 0),
    CLICase(snapshot: "check-mapping-broken", args: ["check", "examples/broken/mapping-sender-twice.yaml"], exit: 1),
    CLICase(snapshot: "explain-refund", args: ["explain", "bots/support", "I want a refund", "--at", "2026-11-30T10:00:00+08:00"], exit: 0),
    CLICase(snapshot: "explain-typo", args: ["explain", "bots/support", "I want a refnd", "--at", "2026-11-30T10:00:00+08:00"], exit: 0),
    CLICase(snapshot: "explain-fourth", args: ["explain", "bots/support", "still nothing", "--customer-messages", "4", "--at", "2026-11-30T10:00:00+08:00"], exit: 0),
    CLICase(snapshot: "explain-waiting", args: ["explain", "bots/support", "hello?", "--owner", "waiting", "--customer-messages", "5", "--at", "2026-11-30T10:00:00+08:00"], exit: 0),
    CLICase(snapshot: "explain-quick-replies", args: ["explain", "Tests/UsherCLITests/Fixtures/quick-bot", "necesito ayuda", "--at", "2026-11-30T10:00:00+01:00"], exit: 0),
    CLICase(snapshot: "explain-remembered-language", args: ["explain", "Tests/UsherCLITests/Fixtures/quick-bot", "ok", "--language", "es", "--at", "2026-11-30T10:00:00+01:00"], exit: 0),
    CLICase(snapshot: "explain-notice-per-language", args: ["explain", "Tests/UsherCLITests/Fixtures/quick-bot", "quiero hablar con una persona", "--at", "2026-11-30T10:00:00+01:00"], exit: 0),
    CLICase(snapshot: "usage-unknown-command", args: ["chekc"], exit: 64),
    CLICase(snapshot: "usage-unknown-option", args: ["check", "--stirct"], exit: 64),
    CLICase(snapshot: "usage-explain-missing-text", args: ["explain", "bots/support"], exit: 64),
    CLICase(snapshot: "test-help", args: ["test", "--help"], exit: 0),
    CLICase(snapshot: "test-support", args: ["test", "bots/support"], exit: 0),
    CLICase(snapshot: "test-all-bots", args: ["test"], exit: 0),
    CLICase(snapshot: "test-verbose-file", args: ["test", "--verbose", "bots/support/tests/seed.yaml"], exit: 0),
    CLICase(snapshot: "test-filter", args: ["test", "bots/support", "--filter", "LOOP guard", "--verbose"], exit: 0),
    CLICase(snapshot: "test-filter-no-match", args: ["test", "bots/support", "--filter", "no such test"], exit: 1),
    CLICase(snapshot: "test-failing", args: ["test", "--bot", "bots/support", "Tests/UsherCLITests/Fixtures/failing-tests.yaml"], exit: 1),
    CLICase(snapshot: "test-failing-verbose", args: ["test", "--verbose", "--filter", "refund", "--bot", "bots/support", "Tests/UsherCLITests/Fixtures/failing-tests.yaml"], exit: 1),
    CLICase(snapshot: "test-malformed", args: ["test", "--bot", "bots/support", "Tests/UsherCLITests/Fixtures/broken-tests.yaml"], exit: 1),
    CLICase(snapshot: "test-loop-guard", args: ["test", "Tests/UsherCLITests/Fixtures/loop-bot"], exit: 1),
    CLICase(snapshot: "test-bot-not-loaded", args: ["test", "Tests/UsherCLITests/Fixtures/broken-bot"], exit: 1),
    CLICase(snapshot: "test-usage-no-bot", args: ["test", "Tests/UsherCLITests/Fixtures/failing-tests.yaml"], exit: 64),
    CLICase(snapshot: "test-usage-missing-path", args: ["test", "bots/nope"], exit: 64),
    CLICase(snapshot: "replay-help", args: ["replay", "--help"], exit: 0),
    CLICase(snapshot: "replay-takeover", args: ["replay", "bots/support", "bots/support/transcripts/takeover.jsonl"], exit: 0),
    CLICase(snapshot: "replay-takeover-json", args: ["replay", "bots/support", "bots/support/transcripts/takeover.jsonl", "--format", "json"], exit: 0),
    CLICase(snapshot: "replay-cucom-ignore-agents", args: ["replay", "bots/support", "bots/support/transcripts/cucom-300.jsonl.gz", "--ignore-agents", "--summary-only"], exit: 0),
    CLICase(snapshot: "replay-against-tienda", args: ["replay", "bots/support", "bots/support/transcripts/takeover.jsonl", "--against", "bots/tienda", "--summary-only"], exit: 0),
    CLICase(snapshot: "replay-turns-in-the-bots-zone", args: ["replay", "bots/tienda", "Tests/UsherCLITests/Fixtures/turns.jsonl"], exit: 0),
    CLICase(snapshot: "replay-start-without-offset", args: ["replay", "bots/support", "Tests/UsherCLITests/Fixtures/turns.jsonl", "--start", "2026-11-30T08:59"], exit: 0),
    CLICase(snapshot: "replay-usage-bad-option", args: ["replay", "bots/support", "Tests/UsherCLITests/Fixtures/turns.jsonl", "--strat", "2026-11-30T08:59"], exit: 64),
    CLICase(snapshot: "replay-bad-data", args: ["replay", "bots/support", "bots/support/bot.yaml"], exit: 65),
    CLICase(snapshot: "replay-usage-no-transcript", args: ["replay", "bots/support"], exit: 64),
    CLICase(snapshot: "deadletters-help", args: ["deadletters", "--help"], exit: 0),
    CLICase(snapshot: "deadletters-usage-no-store", args: ["deadletters"], exit: 64),
]

/// The built `usher`, next to the test bundle.
func usherExecutable() throws -> URL {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [binary.appendingPathComponent("usher"), binary.deletingLastPathComponent().appendingPathComponent("usher")]
    return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "usher binary next to the tests")
}

/// Runs `usher` in the repository root; returns exit status and stdout followed by stderr.
func runUsher(_ args: [String]) throws -> (Int32, String) {
    let exe = try usherExecutable()
    let p = Process()
    p.executableURL = exe
    p.arguments = args
    p.currentDirectoryURL = repoRoot
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    p.environment = env
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    var text = String(decoding: o, as: UTF8.self)
    if !e.isEmpty { text += "--- stderr ---\n" + String(decoding: e, as: UTF8.self) }
    // Rule-set versions hash the rule files: keep snapshots stable across content edits.
    text = text.replacing(/(rule set |version |"version" : "|"rule_set_version" : "|"rule_set_version": ")[0-9a-f]{12}/) { $0.output.1 + "VERSION" }
    return (p.terminationStatus, text)
}

@Suite("usher CLI")
struct CLITests {
    @Test(arguments: cliCases)
    func snapshot(_ c: CLICase) throws {
        let (status, output) = try runUsher(c.args)
        let file = repoRoot.appendingPathComponent("Tests/UsherCLITests/Snapshots/\(c.snapshot).txt")
        if ProcessInfo.processInfo.environment["UPDATE_SNAPSHOTS"] != nil {
            try Data(output.utf8).write(to: file)
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(status == c.exit, "exit status")
        #expect(output == expected, "output differs from \(c.snapshot).txt:\n\(output)")
    }

    /// `usher run --from`: a time it cannot read, or a store without an application's history
    /// to start after, is a usage error before anything is opened.
    @Test func runFromIsCheckedBeforeTheStoreOpens() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("usher-from-\(UUID().uuidString).db").path
        let (bad, badText) = try runUsher(["run", "bots/support", "--store", "sqlite:" + path, "--from", "yesterday"])
        #expect(bad == 64 && badText.contains("usher run: --from needs now, beginning or a time like 2026-12-01T09:00:00Z, not 'yesterday'"))
        let (own, ownText) = try runUsher(["run", "bots/support", "--store", "sqlite:" + path, "--from", "beginning"])
        #expect(own == 64 && ownText.contains("usher run: --from applies to stores over an application's existing data (postgres://USER@HOST/DB"),
                "\(ownText)")
        #expect(!FileManager.default.fileExists(atPath: path), "nothing opened")
    }

    @Test func everyCommandHasHelp() throws {
        for command in ["check", "explain", "schema"] {
            let (status, output) = try runUsher([command, "--help"])
            #expect(status == 0)
            #expect(output.hasPrefix("Usage: usher \(command)"))
        }
    }

    @Test func schemaCommandPrintsTheCheckedInSchemas() throws {
        for (arg, file) in [("rules", "schema/rules.schema.json"), ("bot", "schema/bot.schema.json")] {
            let (status, output) = try runUsher(["schema", arg])
            #expect(status == 0)
            let onDisk = try String(contentsOf: repoRoot.appendingPathComponent(file), encoding: .utf8)
            #expect(output == onDisk, "usher schema \(arg) differs from \(file); regenerate it with `usher schema --out schema`")
            #expect(try JSONSerialization.jsonObject(with: Data(output.utf8)) is [String: Any])
        }
    }

    @Test func strictTurnsWarningsIntoErrors() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-strict-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("dup.yaml")
        try Data("version: 1\nrules:\n  - id: r\n    when: {keywords: [refund, Refund]}\n    then: [reply: ok]\n".utf8).write(to: file)
        let (plain, _) = try runUsher(["check", file.path])
        #expect(plain == 0)
        let (strict, output) = try runUsher(["check", "--strict", file.path])
        #expect(strict == 1)
        #expect(output.contains("4:31: error: [duplicate-keyword]"))
    }

    /// A mapping file is recognised by its `mapping:` key, whatever its name, and its warnings
    /// count like a rule file's.
    @Test func mappingFileWarnings() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-mapping-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("helpdesk.yaml")
        let example = try String(contentsOf: repoRoot.appendingPathComponent("examples/mapping/helpdesk.yaml"), encoding: .utf8)
        try Data(example.replacingOccurrences(of: "    kind: event_type\n", with: "").utf8).write(to: file)
        let (plain, text) = try runUsher(["check", file.path])
        #expect(plain == 0)
        #expect(text.contains("warning: [unused-kind-values]"))
        #expect(text.contains("helpdesk.yaml: maps helpdesk.tickets and helpdesk.ticket_events, intake trigger"))
        let (strict, _) = try runUsher(["check", "--strict", file.path])
        #expect(strict == 1)
    }
}
