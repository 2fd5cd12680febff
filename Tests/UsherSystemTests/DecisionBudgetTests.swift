import Foundation
import Synchronization
import Testing
import UsherRuntime
import UsherSQLite
import UsherStore
import UsherTestSupport

/// Issue 28, defect 5: 500 catastrophic regexes made one 16 KB message take 1.46 s, the
/// messages behind it wait, and the log say it 5,000 times. With the decision's time budget
/// (10 ms) every message is decided within it and the next one is answered at once.
@Suite("Decision budget")
struct DecisionBudgetTests {
    /// 500 rules of `(a+)+(?:zN)?$` (each catastrophic on a long run of a's), then a greeting.
    static let rules: String = {
        var y = "version: 1\nrules:\n"
        for i in 1...500 {
            y += "  - id: slow-\(i)\n    when: {regex: '(a+)+(?:z\(i))?$'}\n    then: [reply: \"slow \(i)\"]\n"
        }
        return y + "  - id: hello\n    when: {keywords: [hello]}\n    then: [reply: \"hi\"]\n"
    }()

    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        func add(_ line: String) { all.withLock { $0.append(line) } }
        var regexLimits: [String] { all.withLock { $0 }.filter { $0.contains(" event=regex-limit ") } }
    }

    @Test func everyMessageIsDecidedWithinItsBudgetAndTheNextIsAnsweredPromptly() async throws {
        let scratch = try Scratch(rules: Self.rules)
        defer { scratch.remove() }
        let bot = try BotRuntime(path: scratch.bot)
        #expect(bot.ruleSet.bot.decisionBudget == .milliseconds(10))
        #expect(bot.warnings.filter { $0.code == "catastrophic-regex" }.count == 500)
        let store = try await SQLiteStore(path: scratch.db)
        let metrics = Metrics()
        let lines = Lines()
        var options = Worker.Options()
        options.idleWait = .milliseconds(20)
        let worker = Worker(store: store, bots: [bot], options: options, metrics: metrics, log: Logger(sink: { lines.add($0) }))
        let task = Task { try await worker.run() }

        let attack = String(repeating: "a", count: 16_383) + "!"
        let messages = 20
        for i in 1...messages {
            try await store.append(NewMessage(conversationID: "slow-\(i)", from: .customer, text: attack))
        }
        let appended = ContinuousClock.now
        try await store.append(NewMessage(conversationID: "greeting", from: .customer, text: "hello"))
        try await eventually("the greeting is answered") {
            try await store.transcript(conversation: "greeting").contains { $0.text == "hi" }
        }
        // Without the budget the greeting waited for 20 × 1.46 s of regexes; a generous bound,
        // so a loaded machine cannot fail it.
        let waited = ContinuousClock.now - appended
        #expect(waited < .seconds(5), "the greeting waited \(waited)")
        try await eventually("every message is decided") {
            try await store.pending(bot: bot.id, after: .start, limit: 1).messages.isEmpty
        }
        worker.requestStop()
        try await task.value
        try await store.close()

        // Every decision within the histogram's 0.5 s bucket: 50 times the budget, a third of
        // what one such message took without it.
        let text = metrics.render()
        #expect(text.contains("usher_decision_seconds_count{bot=\"crash\"} \(messages + 1)\n"), "\(text)")
        #expect(text.contains("usher_decision_seconds_bucket{bot=\"crash\",le=\"0.5\"} \(messages + 1)\n"), "\(text)")
        #expect(metrics.value("usher_decision_budget_exhausted_total", ["bot": "crash"]) == Double(messages),
                "every attack counted as a decision that spent its budget, the greeting not")
        // Every attack spent its budget, and was reported: one regex-limit event a decision
        // names where it ran out, and the log says it once per rule (the test takes under a
        // minute), not per message.
        let logged = lines.regexLimits
        let budgetLines = logged.filter { $0.contains(#"limit="decision budget""#) }
        #expect(!budgetLines.isEmpty)
        let rulesLogged = logged.compactMap { $0.split(separator: " ").first { $0.hasPrefix("rule=") } }
        #expect(rulesLogged.count == Set(rulesLogged).count, "a rule logged twice: \(rulesLogged)")
        #expect(logged.count <= 500)
        let hits = text.split(separator: "\n").filter { $0.hasPrefix("usher_regex_limit_hits_total{") }
            .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0, +)
        #expect(hits >= Double(messages), "every decision that spent its budget is counted: \(hits)")
        #expect(Double(logged.count) < hits, "the log is throttled, the metric is not")
    }
}
