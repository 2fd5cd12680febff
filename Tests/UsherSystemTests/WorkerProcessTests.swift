import Foundation
import Testing
import UsherEngine
import UsherSQLite
import UsherStore
import UsherTestSupport

@Suite("Worker processes (SQLite)", .serialized)
struct WorkerProcessTests {
    /// Asserts the seed's outcome in every conversation: three replies in order, one handoff.
    func assertSeedOutcome(_ store: SQLiteStore, conversations: [String], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var problems: [String] = []
        for c in conversations {
            let t = try await store.transcript(conversation: c)
            let replies = t.filter { $0.from == .bot }.map(\.text)
            if replies != ["one", "two", "three"] { problems.append("\(c): \(replies)") }
            if t.filter({ $0.from == .system }).count != 1 { problems.append("\(c): handoffs \(t.filter { $0.from == .system }.count)") }
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))", sourceLocation: sourceLocation)
    }

    @Test func twoWorkersOnOneFileNeverDoubleReply() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = try await SQLiteStore(path: scratch.db)
        let a = try WorkerProcess(scratch, extra: ["--worker-id", "A"])
        let b = try WorkerProcess(scratch, extra: ["--worker-id", "B"])
        let ids = (0..<100).map { "c\($0)" }
        for k in 0..<8 { for c in ids { try await store.append(NewMessage(conversationID: c, from: .customer, text: "m\(k)")) } }
        try await drain(store, bot: "crash")
        #expect(a.terminate().status == 0)
        #expect(b.terminate().status == 0)
        try await assertSeedOutcome(store, conversations: ids)
        try await store.close()
    }

    @Test func sigtermUnderLoadLosesNothing() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = try await SQLiteStore(path: scratch.db)
        let ids = (0..<300).map { "c\($0)" }
        let worker = try WorkerProcess(scratch)
        for k in 0..<6 { for c in ids { try await store.append(NewMessage(conversationID: c, from: .customer, text: "m\(k)")) } }
        let (status, seconds) = worker.terminate()
        #expect(status == 0, "exit 0 on SIGTERM")
        #expect(seconds < 10, "within the shutdown deadline (\(seconds) s)")
        let restarted = try WorkerProcess(scratch)
        try await drain(store, bot: "crash")
        #expect(restarted.terminate().status == 0)
        try await assertSeedOutcome(store, conversations: ids)
        try await store.close()
    }

    @Test func brokenReloadKeepsTheRunningRules() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = try await SQLiteStore(path: scratch.db)
        let port = try Loopback.freePort()
        let worker = try WorkerProcess(scratch, extra: ["--metrics", "127.0.0.1:\(port)"])
        defer { _ = worker.terminate() }
        try await store.append(NewMessage(conversationID: "warm", from: .customer, text: "hi"))
        try await drain(store, bot: "crash")

        let rules = URL(fileURLWithPath: scratch.bot).appendingPathComponent("rules.yaml")
        try Data("version: 1\nrules:\n  - id: opening\n    whne: {customer_messages: 1}\n    then: [reply: broken]\n".utf8).write(to: rules)
        kill(worker.process.processIdentifier, SIGHUP)
        try await eventually("the reload failed", detail: worker.log) {
            try metric(port, "usher_rules_last_reload_successful{bot=\"crash\"}") == 0
        }
        #expect(worker.log.contains("rules.yaml:4:5"), "the log names file:line:col")
        try await store.append(NewMessage(conversationID: "probe", from: .customer, text: "hello"))
        try await drain(store, bot: "crash")
        #expect(try await store.transcript(conversation: "probe").map(\.text) == ["hello", "one"], "the old rules still answer")

        try Data(Scratch.seedRules.replacingOccurrences(of: "\"one\"", with: "\"uno\"").utf8).write(to: rules)
        kill(worker.process.processIdentifier, SIGHUP)
        try await eventually("the reload succeeded", detail: worker.log) {
            try metric(port, "usher_rules_last_reload_successful{bot=\"crash\"}") == 1
        }
        try await store.append(NewMessage(conversationID: "probe2", from: .customer, text: "hello"))
        try await drain(store, bot: "crash")
        #expect(try await store.transcript(conversation: "probe2").map(\.text) == ["hello", "uno"], "the fixed rules answer")
        try await store.close()
    }

    /// One sample from /metrics.
    func metric(_ port: Int, _ series: String) throws -> Double? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:\(port)/metrics', timeout=5).read().decode())"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#endif
