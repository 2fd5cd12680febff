import Foundation
import Testing
import UsherEngine
import UsherSQLite
@testable import UsherStdio
import UsherStore
import UsherStoreTestKit

/// A temporary directory, removed when the value goes.
final class TempDir: Sendable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("usher-stdio-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// A file holding `text`, opened for reading.
    func input(_ text: String, name: String = "in.jsonl") throws -> FileHandle {
        try input(Data(text.utf8), name: name)
    }
    func input(_ data: Data, name: String = "in.jsonl") throws -> FileHandle {
        let p = path(name)
        _ = FileManager.default.createFile(atPath: p, contents: data)
        return try FileHandle(forReadingFrom: URL(fileURLWithPath: p))
    }
}

/// A stand-in for the worker: the seed's behaviour — a canned reply to each of the first three
/// customer messages, a handoff on the fourth, silence after.
enum MiniWorker {
    static let bot = BotIdentity(id: "support", name: "Support", senderID: "bot:support")

    @discardableResult
    static func drain(_ store: any ChatStore) async throws -> Int {
        var committed = 0
        while true {
            let batch = try await store.pending(bot: bot.id, after: .start, limit: 100).messages
            if batch.isEmpty { return committed }
            for m in batch {
                let old = try await store.state(bot: bot.id, conversation: m.conversationID)
                var state = old ?? ConversationState(conversationID: m.conversationID)
                state.version += 1
                var effects: [Effect] = []
                if m.kind == .close {
                    state.owner = .bot
                    state.customerMessages = 0
                } else if m.from == .agent {
                    state.owner = .agent
                } else if m.from == .customer {
                    state.customerMessages += 1
                    state.customerName = state.customerName ?? m.senderName
                    if state.owner == .bot {
                        if state.customerMessages <= 3 {
                            effects.append(.reply(text: "reply \(state.customerMessages) to \(m.text)", rule: "opening"))
                        } else {
                            state.owner = .waiting
                            effects += [.system(text: "Connecting you to an agent.", rule: "threshold"),
                                        .handoff(reason: "threshold", queue: "general", priority: .normal, rule: "threshold"),
                                        .notify(text: "\(state.customerName ?? "A customer") is waiting", queue: "general",
                                                reason: "threshold", rule: "threshold")]
                        }
                    }
                }
                let decision = Decision(outcome: .fired([]), effects: effects, state: state, ruleSetVersion: "v1")
                let r = try await store.commit(Commit(bot: bot, inbound: m, expectedVersion: old?.version ?? 0,
                                                      decision: decision, at: m.at))
                if r == .committed { committed += 1 }
            }
        }
    }
}

func json(_ line: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

@Suite("stdio store")
struct StdioStoreTests {
    /// Four customer messages (the fourth crosses the threshold), then an agent and the customer.
    static let conversation = """
        {"conversation":"c-42","id":"m-1","at":"2026-11-29T10:00:00Z","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"hi"}
        {"conversation":"c-42","id":"m-2","at":"2026-11-29T10:00:05Z","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"anyone?"}
        {"conversation":"c-42","id":"m-3","at":"2026-11-29T10:00:09.250Z","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"???"}
        {"conversation":"c-42","id":"m-4","at":"2026-11-29T10:00:12+08:00","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"still nothing"}
        {"conversation":"c-42","id":"m-5","at":"2026-11-29T10:01:00Z","from":"agent","sender_id":"agent:li","sender_name":"Li","text":"Hi, I'm Li"}
        {"conversation":"c-42","id":"m-6","at":"2026-11-29T10:01:30Z","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"thanks"}

        """

    /// Feeds the conversation the way it happens live: the worker answers the customer's four
    /// messages before the agent writes (a reply is never written after an agent's message).
    @discardableResult
    static func feed(_ store: StdioStore, _ dir: TempDir, errors: MemorySink = MemorySink()) async throws -> StdioIntake.Summary {
        let lines = conversation.split(separator: "\n").map(String.init)
        let intake = StdioIntake(store: store, errors: errors)
        var total = StdioIntake.Summary()
        for (i, line) in lines.enumerated() {
            let s = try await intake.ingest(line, number: i + 1)
            total.lines += s.lines
            total.appended += s.appended
            total.duplicates += s.duplicates
            total.malformed += s.malformed
            try await MiniWorker.drain(store)
        }
        return total
    }

    @Test func linesInActionsOut() async throws {
        let dir = TempDir()
        let out = MemorySink(), errors = MemorySink()
        let store = try await StdioStore(path: dir.path("state.db"), output: out)
        defer { Task { try? await store.close() } }
        let summary = try await Self.feed(store, dir, errors: errors)
        #expect(summary.lines == 6 && summary.appended == 6 && summary.malformed == 0 && summary.duplicates == 0)
        #expect(errors.lines.isEmpty)

        let lines = try out.lines.map(json)
        #expect(lines.map { $0["type"] as? String } == ["reply", "reply", "reply", "system", "handoff", "notification"])
        #expect(lines.allSatisfy { $0["conversation"] as? String == "c-42" })
        let keys = lines.compactMap { $0["key"] as? String }
        #expect(keys == ["support:m-1:0", "support:m-2:0", "support:m-3:0", "support:m-4:0", "support:m-4:handoff",
                         "support:m-4:2"])
        #expect(lines[0]["text"] as? String == "reply 1 to hi")
        #expect(lines[0]["rule"] as? String == "opening")
        #expect(lines[0]["from"] as? String == "bot" && lines[0]["sender_id"] as? String == "bot:support")
        #expect(lines[0]["at"] as? String == "2026-11-29T10:00:00.000Z")
        #expect(lines[3]["text"] as? String == "Connecting you to an agent." && lines[3]["rule"] as? String == "threshold")
        #expect(lines[4]["queue"] as? String == "general" && lines[4]["reason"] as? String == "threshold")
        #expect(lines[4]["message_id"] as? String == "m-4" && lines[4]["customer_name"] as? String == "Pooja")
        #expect(lines[5]["handoff"] as? Bool == true && lines[5]["last_message"] as? String == "still nothing")
        #expect(lines[5]["text"] as? String == "Pooja is waiting")
        #expect(try await store.inbox(bot: MiniWorker.bot.id).isEmpty, "the agent took over")
    }

    @Test func aRestartWithTheSameStateFileWritesNothingTwice() async throws {
        let dir = TempDir()
        let path = dir.path("state.db")
        let first = MemorySink()
        do {
            let store = try await StdioStore(path: path, output: first)
            try await Self.feed(store, dir)
            try await store.close()
        }
        #expect(first.lines.count == 6)

        // The same input again (a supervisor restarted the pipeline), and more.
        let second = MemorySink()
        let store = try await StdioStore(path: path, output: second)
        defer { Task { try? await store.close() } }
        #expect(second.lines.isEmpty, "nothing was left unwritten")
        let again = try await StdioIntake(store: store, errors: MemorySink()).run(input: try dir.input(Self.conversation))
        #expect(again.appended == 0 && again.duplicates == 6)
        #expect(try await MiniWorker.drain(store) == 0)
        #expect(second.lines.isEmpty, "no action written twice")

        let more = """
            {"conversation":"c-42","event":"close","id":"close-1"}
            {"conversation":"c-42","id":"m-7","from":"customer","text":"back again"}
            """
        let summary = try await StdioIntake(store: store, errors: MemorySink()).run(input: try dir.input(more, name: "more.jsonl"))
        #expect(summary.appended == 2)
        #expect(try await MiniWorker.drain(store) == 2)
        #expect(try second.lines.map(json).map { $0["key"] as? String } == ["support:m-7:0"])
    }

    @Test func actionsCommittedButNotWrittenBeforeACrashAreWrittenOnceAtOpen() async throws {
        let dir = TempDir()
        let path = dir.path("state.db")
        do {
            // Committed through the database directly: as if the process died right after COMMIT.
            let db = try await SQLiteStore(path: path)
            let m = try await db.append(NewMessage(id: "m-1", conversationID: "c", from: .customer, text: "hi"))
            let decision = Decision(outcome: .fired(["opening"]), effects: [.reply(text: "hello", rule: "opening")],
                                    state: { var s = ConversationState(conversationID: "c"); s.version = 1; return s }(),
                                    ruleSetVersion: "v1")
            #expect(try await db.commit(Commit(bot: MiniWorker.bot, inbound: m, expectedVersion: 0, decision: decision,
                                                at: m.at)) == .committed)
            try await db.close()
        }
        let out = MemorySink()
        let store = try await StdioStore(path: path, output: out)
        #expect(try out.lines.map(json).map { $0["text"] as? String } == ["hello"])
        try await store.close()
        let later = MemorySink()
        try await StdioStore(path: path, output: later).close()
        #expect(later.lines.isEmpty)
    }

    @Test func aReplyLineCarriesItsQuickReplies() async throws {
        let dir = TempDir()
        let out = MemorySink()
        let store = try await StdioStore(path: dir.path("state.db"), output: out)
        let m = try await store.append(NewMessage(id: "m-1", conversationID: "c", from: .customer, text: "hi",
                                                  at: Date(timeIntervalSince1970: 1_764_410_400)))
        let offered = [QuickReply(title: "Track my order"), QuickReply(title: "Returns", url: "https://shop.example/returns?a=1&b=%2F")]
        let commit = ConformanceSuite.sampleCommit(m, after: nil, reply: "Anything else?", handoff: true, bot: MiniWorker.bot,
                                                   quickReplies: offered)
        #expect(try await store.commit(commit) == .committed)
        try await store.close()
        let replies = out.lines.filter { $0.hasPrefix(#"{"type":"reply""#) }
        #expect(replies == [
            #"{"type":"reply","key":"support:m-1:0","conversation":"c","id":"support:m-1:0","at":"2025-11-29T10:00:00.000Z","from":"bot","sender_id":"bot:support","sender_name":"Support","rule":"r","text":"Anything else?","quick_replies":[{"title":"Track my order"},{"title":"Returns","url":"https://shop.example/returns?a=1&b=%2F"}]}"#,
        ])
        let notice = try #require(out.lines.first { $0.hasPrefix(#"{"type":"system""#) })
        #expect(!notice.contains("quick_replies"), "a line without quick replies leaves the key out")
    }

    @Test func aFailingOutputKeepsTheActionsForTheNextFlush() async throws {
        final class Broken: LineSink {
            func write(_ lines: [String]) throws { throw CocoaError(.fileWriteNoPermission) }
        }
        let dir = TempDir()
        let path = dir.path("state.db")
        do {
            let store = try await StdioStore(path: path, output: Broken())
            let first = String(Self.conversation.split(separator: "\n")[0])
            #expect(try await StdioIntake(store: store, errors: MemorySink()).ingest(first, number: 1).appended == 1)
            await #expect(throws: (any Error).self) { try await MiniWorker.drain(store) }
            try await store.close()
        }
        let out = MemorySink()
        let store = try await StdioStore(path: path, output: out)
        defer { Task { try? await store.close() } }
        #expect(out.lines.count == 1, "the committed reply is written once the output works: \(out.lines)")
    }

    @Test func malformedLinesAreReportedWithTheirNumberAndSkipped() async throws {
        let dir = TempDir()
        let errors = MemorySink()
        let store = try await StdioStore(path: dir.path("state.db"), output: MemorySink())
        defer { Task { try? await store.close() } }
        var input = Data()
        let lines: [String] = [
            #"{"conversation":"c","id":"ok-1","text":"fine"}"#,                        // 1
            "this is not json",                                                        // 2
            #"{"conversation":"c","text":"unterminated}"#,                             // 3
            #"["an","array"]"#,                                                        // 4
            #"{"text":"no conversation"}"#,                                            // 5
            #"{"conversation":42,"text":"x"}"#,                                        // 6
            #"{"conversation":"c"}"#,                                                  // 7
            #"{"conversation":"c","from":"robot","text":"x"}"#,                        // 8
            #"{"conversation":"c","event":"reopen"}"#,                                 // 9
            #"{"conversation":"c","at":"yesterday","text":"x"}"#,                      // 10
            "",                                                                        // 11 blank: fine
            String(repeating: "[", count: 100_000),                                    // 12
            #"{"conversation":"c","text":"x","deep":"# + String(repeating: "[", count: 100_000)
                + String(repeating: "]", count: 100_000) + "}",                        // 13 valid, too deep
            #"{"conversation":"c","id":"ok-2","text":"nul \u0000 and \u00e9"}"#,       // 14
        ]
        for l in lines { input.append(Data(l.utf8)); input.append(0x0A) }
        input.append(contentsOf: [0xFF, 0xFE, 0x7B, 0x0A])                            // 15 invalid UTF-8
        input.append(Data(#"{"conversation":"c","event":"close"}"#.utf8))             // 16, no final newline
        let summary = try await StdioIntake(store: store, errors: errors).run(input: try dir.input(input))

        #expect(summary.lines == 16)
        #expect(summary.appended == 3)
        #expect(summary.malformed == 12)
        let numbers = errors.lines.map { $0.split(separator: ":").dropFirst().first.map(String.init) ?? "?" }
        #expect(numbers == ["2", "3", "4", "5", "6", "7", "8", "9", "10", "12", "13", "15"])
        #expect(errors.lines.allSatisfy { $0.hasPrefix("stdin:") && $0.contains(": error: ") })
        #expect(errors.lines[4] == #"stdin:6: error: "conversation" must be a string"#)
        #expect(errors.lines[5] == #"stdin:7: error: missing "text""#)
        #expect(errors.lines[6] == #"stdin:8: error: "from" is 'robot'; expected customer, agent, bot or system"#)
        #expect(errors.lines[1] == #"stdin:3:28: error: invalid JSON: unterminated string (missing closing '"')"#)
        #expect(errors.lines[10] == "stdin:13:102: error: invalid JSON: nested more than 64 levels deep")
        let t = try await store.transcript(conversation: "c")
        #expect(t.map(\.kind) == [.message, .message, .close])
        #expect(t[1].text == "nul \u{0} and é")
    }

    @Test func inputLinesAsTheJSONReaderReadsThem() throws {
        func parse(_ line: String, number: Int = 1) throws(InputLine.Malformed) -> NewMessage {
            try InputLine.parse(ArraySlice(line.utf8), number: number, source: "stdin", now: Date(timeIntervalSince1970: 0))
        }
        // A line without an id gets one from its number and FNV-1a: the same as before the
        // hash had one home, so input fed again after an upgrade appends nothing twice.
        #expect(try parse(#"{"conversation":"c","text":"hi"}"#, number: 7).id == "stdin-7-c8260439864bde8d")
        #expect(try parse(#"{"conversation":"c","text":"hi","at":1764468000.5}"#).at == Date(timeIntervalSince1970: 1_764_468_000.5))
        #expect(try parse(#" {"conversation":"c","text":"hi","at":null,"id":null,"extra":{"a":[1,{}]}}"#).at == Date(timeIntervalSince1970: 0))
        #expect(throws: InputLine.Malformed.self) { try parse(#"{"conversation":"c","text":"hi","at":true}"#) }
        // A byte-order mark before the object is read past, and leaves the derived id alone.
        let marked = try parse("\u{FEFF}" + #"{"conversation":"c","text":"hi"}"#, number: 7)
        #expect(marked.conversationID == "c" && marked.text == "hi" && marked.id == "stdin-7-c8260439864bde8d")
        // A key given twice is refused, naming it: which of two conversations was meant is unknown.
        do {
            _ = try parse(#"{"conversation":"c1","text":"hi","conversation":"c2"}"#)
            Issue.record("a duplicate conversation key was accepted")
        } catch {
            #expect(error.message == "invalid JSON: duplicate key 'conversation'")
            #expect(error.column == 34)
        }
        do {
            _ = try parse(#"{"conversation":"c","text":"é",}"#)
            Issue.record("a trailing comma was accepted")
        } catch {
            #expect(error.message == "invalid JSON: trailing comma before '}'")
            #expect(error.column == 32, "columns count characters, not bytes")
        }
    }

    @Test func overlongLinesAreSkipped() async throws {
        let dir = TempDir()
        let errors = MemorySink()
        let store = try await StdioStore(path: dir.path("state.db"), output: MemorySink())
        defer { Task { try? await store.close() } }
        let big = #"{"conversation":"c","text":""# + String(repeating: "x", count: 300_000) + #""}"#
        let input = big + "\n" + #"{"conversation":"c","id":"after","text":"short"}"# + "\n"
        let summary = try await StdioIntake(store: store, errors: errors, maxLineBytes: 100_000)
            .run(input: try dir.input(input))
        #expect(summary.lines == 2 && summary.malformed == 1 && summary.appended == 1)
        #expect(errors.lines == ["stdin:1: error: line longer than 100000 bytes; skipped"])
        #expect(try await store.transcript(conversation: "c").map(\.id) == ["after"])
    }

    @Test func aMessageOfAMegabyteGoesThrough() async throws {
        let dir = TempDir()
        let store = try await StdioStore(path: dir.path("state.db"), output: MemorySink())
        defer { Task { try? await store.close() } }
        let text = String(repeating: "ü", count: 500_000)
        let summary = try await StdioIntake(store: store, errors: MemorySink())
            .run(input: try dir.input(#"{"conversation":"c","text":"\#(text)"}"# + "\n"))
        #expect(summary.appended == 1)
        #expect(try await store.transcript(conversation: "c").first?.text == text)
    }

    @Test func theSameStoreWorksThroughAPipe() async throws {
        let dir = TempDir()
        let out = MemorySink()
        let store = try await StdioStore(path: dir.path("state.db"), output: out)
        defer { Task { try? await store.close() } }
        let pipe = Pipe()
        let signal = try #require(store.changeSignal)
        async let summary = StdioIntake(store: store, errors: MemorySink()).run(input: pipe.fileHandleForReading)
        // Each line is taken in as it comes, while the pipe stays open: it is in the store
        // before the next is written. (A read that waited for 64 KiB or the pipe's end held
        // them all back until the close.)
        for (written, line) in Self.conversation.split(separator: "\n").prefix(2).enumerated() {
            pipe.fileHandleForWriting.write(Data((line + "\n").utf8))
            let taken = try await signal.once {
                try await store.transcript(conversation: "c-42").count > written
            }
            #expect(taken, "line \(written + 1) taken in while the pipe is open")
        }
        try pipe.fileHandleForWriting.close()
        #expect(try await summary.appended == 2)
        try await MiniWorker.drain(store)
        #expect(out.lines.count == 2)
    }

    @Test(arguments: [("stdio", "usher-stdio.db"), ("stdio:", "usher-stdio.db"), ("stdio:/var/lib/x.db", "/var/lib/x.db"),
                      ("stdio://state.db", "state.db")])
    func urls(_ url: String, _ path: String) throws {
        #expect(try StdioStore.parse(url: url) == path)
    }

    static let dir = TempDir()
    static let suite = ConformanceSuite(makeStore: { try await StdioStore(path: dir.path("\(UUID().uuidString).db"), output: MemorySink()) })

    @Test(arguments: ConformanceCheck.checks(for: Set(StoreCapability.allCases)))
    func conformance(_ check: ConformanceCheck) async throws {
        let failures = await Self.suite.run(check)
        #expect(failures.isEmpty, "\(failures)")
    }
}

extension ChangeSignal {
    /// Whether `condition` holds, looked at again at each notify: false once the signal has
    /// stayed still for `quiet` (or the task is cancelled) and it still does not. A wait for
    /// an event with a generous bound, never a sleep.
    func once(quiet: Duration = .seconds(30), _ condition: () async throws -> Bool) async rethrows -> Bool {
        while true {
            let seen = generation
            if try await condition() { return true }
            await wait(since: seen, timeout: quiet)
            if generation == seen { return try await condition() }
        }
    }
}
