import Foundation
import Testing
import UsherEngine
import UsherRules
import UsherTranscripts
#if canImport(Glibc)
import Glibc
#endif

/// Three interleaved conversations, in DESIGN.md §5's shape: c-1 gets the seed's three replies,
/// the threshold handoff, then an agent; in c-2 an agent writes before any handoff; c-3 asks
/// for a human at once.
let knownTranscript = """
{"conversation":"c-1","id":"1","at":"2026-11-30T02:00:00Z","from":"customer","sender_name":"Pooja","text":"hello"}
{"conversation":"c-2","id":"1","at":"2026-11-30T02:00:00Z","from":"customer","text":"I want a refund"}
{"conversation":"c-1","id":"2","at":"2026-11-30T02:00:30Z","from":"customer","text":"are you there"}
{"conversation":"c-2","id":"2","at":"2026-11-30T02:00:40Z","from":"agent","sender_name":"Ana","text":"Hi, Ana here"}
{"conversation":"c-1","id":"3","at":"2026-11-30T02:01:00Z","from":"customer","text":"???"}
{"conversation":"c-2","id":"3","at":"2026-11-30T02:01:00Z","from":"customer","text":"thanks Ana"}
{"conversation":"c-1","id":"4","at":"2026-11-30T02:01:30Z","from":"customer","text":"still nothing"}
{"conversation":"c-1","id":"5","at":"2026-11-30T02:02:00Z","from":"customer","text":"hello??"}
{"conversation":"c-1","id":"6","at":"2026-11-30T02:02:30Z","from":"agent","text":"Hi, Li here"}
{"conversation":"c-1","id":"7","at":"2026-11-30T02:03:00Z","from":"customer","text":"can I talk to a human"}
{"conversation":"c-3","id":"1","at":"2026-11-30T02:03:20Z","from":"customer","text":"I need a human"}

"""

@Suite("replay")
struct ReplayRunnerTests {
    @Test func summaryOfAKnownTranscript() throws {
        let (r, conversations) = try replayText(knownTranscript)
        let s = r.summary
        #expect(conversations.map(\.id) == ["c-1", "c-2", "c-3"])
        #expect(s.conversations == 3)
        #expect((s.customerMessages, s.agentMessages, s.botMessages, s.systemMessages) == (9, 2, 0, 0))
        #expect(s.decided == 6)
        #expect((s.silentWaiting, s.silentAgent) == (1, 2))
        #expect(s.replies == 4 && s.conversationsWithReplies == 2)
        #expect(s.systemNotices == 2)
        #expect(s.handoffs == 2 && s.conversationsHandedOff == 2)
        #expect(s.handoffsByReason == ["threshold": 1, "asked-for-human": 1])
        #expect(s.handoffPositions == [4: 1, 1: 1])
        #expect(s.takeovers == 2 && s.takeoversBeforeHandoff == 1)
        #expect(s.spokeOverHuman == 0)
        #expect(s.ruleHits == ["opening": 3, "refund": 1, "threshold": 1, "wants-human": 1])
        #expect(s.rulesByHits.map(\.rule) == ["opening", "wants-human", "threshold", "refund"])
        #expect(s.neverFired == ["never"])
        #expect(s.truncations == 0 && s.regexLimits.isEmpty)
        #expect(r.records == 11 && r.duplicates == 0 && r.skippedLines == 0)

        let c1 = conversations[0]
        #expect(c1.steps.map { $0.bot?.label } == ["opening", "opening", "opening", "threshold", "silent (waiting)", "takeover", "silent (agent)"])
        #expect(c1.steps.compactMap { $0.bot?.replies.first?.text } == ["Hi!", "Thanks!", "One moment..."])
        #expect(c1.handoffs == [ReplayHandoff(step: 3, customerMessage: 4, reason: "threshold", rule: "threshold")])
        #expect(c1.takeover == 5)
        #expect(c1.steps[5].bot?.ownerBefore == .waiting)
        #expect(conversations[1].takeover == 1 && conversations[1].steps[1].bot?.ownerBefore == .bot)
        #expect(conversations[2].handoffs.map(\.customerMessage) == [1])
    }

    @Test func ignoringAgentsListsWhereTheBotSpokeOverAHuman() throws {
        let (r, conversations) = try replayText(knownTranscript, options: ReplayOptions(agents: .ignore))
        let s = r.summary
        #expect(s.notFed == 2 && s.takeovers == 0)
        #expect(s.decided == 7 && (s.silentWaiting, s.silentAgent) == (2, 0))
        #expect(s.replies == 5)
        // c-2: after Ana wrote, "thanks Ana" would have got the opening's first text.
        #expect(s.spokeOverHuman == 1 && s.spokeOverConversations == 1 && s.spokeOverByRule == ["opening": 1])
        #expect(s.spokeOverExamples.map(\.conversation) == ["c-2"])
        #expect(s.spokeOverExamples.first?.said == "Hi!" && s.spokeOverExamples.first?.customerMessage == 2)
        let c2 = conversations[1]
        #expect(c2.steps.map(\.humanHadWritten) == [false, false, true])
        #expect(c2.steps[1].bot == nil)
        #expect(c2.steps.map(\.spokeOverHuman) == [false, false, true])
        // c-1: the human wrote after the handoff; the bot, waiting, stays silent: no speaking over.
        #expect(conversations[0].steps.last?.humanHadWritten == true && conversations[0].spokeOverHuman == 0)
    }

    @Test func againstGroupsDifferencesByTransition() throws {
        let (r, conversations) = try replayText(knownTranscript, against: try replayBot(replayOtherBotFiles))
        let d = try #require(r.diff)
        #expect(d.compared == 11)
        #expect(d.messages == 5 && d.conversations == 2)
        #expect(d.transitions.map(\.name) == [
            "opening → fallback", "opening → opening (other effects)", "opening → threshold",
            "refund → fallback", "threshold → silent (waiting)",
        ])
        #expect(d.transitions.allSatisfy { $0.messages == 1 && $0.conversations == 1 && $0.examples.count == 1 })
        let refund = try #require(d.transitions.first { $0.from == "refund" })
        #expect(refund.examples[0].conversation == "c-2" && refund.examples[0].text == "I want a refund")
        #expect(refund.examples[0].bot.replies.map(\.text) == ["Refund? What's your order number?"])
        #expect(refund.examples[0].against.replies.map(\.text) == ["Sorry?"])
        #expect(conversations.map(\.differences) == [4, 1, 0])
        let other = try #require(r.againstSummary)
        #expect(other.bot == "o" && other.handoffPositions == [3: 1, 1: 1] && other.ruleHits["fallback"] == 2)
        #expect(r.summary.handoffPositions == [4: 1, 1: 1])
    }

    @Test func manyConversationsOfOneLineEachAreNeverHeldTogether() throws {
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let line = #"{"id":"c%d","turns":[{"role":"user","content":"hi there"},{"role":"agent","content":"Hello! How can I help?"},{"role":"user","content":"I want a refund for my order"},{"role":"agent","content":"Sure."},{"role":"user","content":"thanks"}]}"#
        var text = ""
        text.reserveCapacity(50_000 * 230)
        for i in 0..<50_000 { text += line.replacingOccurrences(of: "%d", with: String(i)) + "\n" }
        let path = try replayWrite(Array(text.utf8), "many.jsonl", in: dir)
        text = ""
        let runner = ReplayRunner(bot: try replayBot(), options: ReplayOptions(agents: .ignore))
        var w = CountingWriter()
        let r = try runner.run([path], into: &w)
        #expect(w.conversations == 50_000)
        #expect(r.summary.conversations == 50_000 && r.summary.customerMessages == 150_000)
        // Never more than one conversation held at once. (The process's peak memory says
        // nothing here: the tests that run alongside in this process move it.)
        #expect(r.peakInFlight == 1)
    }

    @Test func interleavedConversationsLeaveMemoryWhenTheirSessionIsOver() throws {
        // 3,000 conversations of three messages each, one starting every 20 minutes: with a
        // 24 h idle reset, a few hundred are in flight at once, never all.
        var text = ""
        let start = TranscriptReader.Timeline.defaultStart
        for i in 0..<3000 {
            for k in 0..<3 {
                let at = TranscriptTime.format(start.addingTimeInterval(Double(i) * 1200 + Double(k) * 60))
                text += #"{"conversation":"c\#(i)","id":"\#(k)","at":"\#(at)","from":"customer","text":"hello \#(k)"}"# + "\n"
            }
        }
        let (r, conversations) = try replayText(text)
        #expect(conversations.count == 3000 && r.summary.replies == 9000)
        #expect(r.peakInFlight < 500, "peak in flight \(r.peakInFlight)")
        #expect(conversations.map(\.id) == (0..<3000).map { "c\($0)" })
    }

    @Test func aConversationThatComesBackIsAnotherPartWithItsState() throws {
        // c-9 writes, 2,000 other messages pass over two days (so c-9's first part is reported),
        // then c-9 comes back: a new session, the once-per-conversation cooldown state kept.
        var text = #"{"conversation":"c-9","id":"a","at":"2026-11-30T02:00:00Z","from":"customer","text":"I want a refund"}"# + "\n"
        let start = TranscriptReader.Timeline.defaultStart
        for i in 0..<2000 {
            let at = TranscriptTime.format(start.addingTimeInterval(60 + Double(i) * 90))
            text += #"{"conversation":"x\#(i)","id":"1","at":"\#(at)","from":"customer","text":"hi"}"# + "\n"
        }
        text += #"{"conversation":"c-9","id":"b","at":"2026-12-03T02:00:00Z","from":"customer","text":"refund again"}"# + "\n"
        let (_, conversations) = try replayText(text)
        let parts = conversations.filter { $0.id == "c-9" }
        #expect(parts.map(\.part) == [1, 2])
        #expect(parts.map { $0.steps.count } == [1, 1])
        #expect(parts[1].steps[0].bot?.session == 2 && parts[1].steps[0].bot?.customerMessage == 1)
    }

    @Test func eventsOutOfOrderDuplicatesAndSkippedLines() throws {
        let text = """
        {"conversation":"c","id":"1","at":"2026-11-30T02:01:00Z","from":"customer","text":"hello"}
        {"conversation":"c","id":"1","at":"2026-11-30T02:01:00Z","from":"customer","text":"hello"}
        {"conversation":"c","id":"2","at":"2026-11-30T02:00:00Z","from":"customer","text":"earlier"}
        {"conversation":"c","id":"3","at":"2026-11-30T02:02:00Z","from":"customer","text":"refund"}
        {"conversation":"c","id":"4","at":"2026-11-30T02:03:00Z","from":"nobody","text":"?"}

        """
        do {
            _ = try replayText(text)
            Issue.record("an out-of-order message was accepted")
        } catch let e as TranscriptError {
            #expect(e.code == "out-of-order" && e.line == 3 && e.column == 1, "file:line:col, as every bad line")
            #expect(e.message == "this message (2026-11-30T02:00:00Z) is earlier than the previous message of conversation 'c' (line 1, 2026-11-30T02:01:00Z); events must be in time order")
        }
        let (r, conversations) = try replayText(text, options: ReplayOptions(skipBadLines: true))
        #expect(r.skippedLines == 2 && r.badLines.map(\.code) == ["out-of-order", "unknown-role"])
        #expect(r.duplicates == 1)
        #expect(conversations.first?.steps.map(\.message.id) == ["1", "3"])
        #expect(r.summary.ruleHits == ["opening": 1, "refund": 1])
    }

    @Test func twoFilesContinueTheTimeline() throws {
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = try replayWrite(Array(#"{"id":"a","turns":[{"role":"user","content":"hi"}]}"#.utf8), "a.jsonl", in: dir)
        let b = try replayWrite(GzipFixture.stored(Array(#"{"id":"b","turns":[{"role":"user","content":"hi"}]}"#.utf8)), "b.jsonl.gz", in: dir)
        let runner = ReplayRunner(bot: try replayBot(), transcripts: [a, b])
        var w = CollectingWriter()
        _ = try runner.run([a, b], into: &w)
        // The bot's zone is UTC: the replay starts at 10:00 UTC.
        let start = try #require(TranscriptTime.parse("2026-11-30T10:00:00Z"))
        let times = w.box.conversations.map { $0.steps[0].message.at.timeIntervalSince(start) }
        #expect(times == [0, 60])
        #expect(w.box.conversations.map(\.file) == [a, b])
    }

    /// A dataset's conversations start on a working morning in the bot's own zone, not in
    /// Shanghai's, so that business-hours rules behave as on an ordinary day wherever the bot is.
    @Test func turnsStartAtTenInTheBotsZone() throws {
        var files = replayBotFiles
        files["r/bot.yaml"] = files["r/bot.yaml"]!.replacingOccurrences(of: "timezone: UTC", with: "timezone: America/New_York")
        let line = #"{"id":"a","turns":[{"role":"user","content":"hi"},{"role":"user","content":"still there?"}]}"# + "\n"
        let (_, conversations) = try replayText(line, bot: try replayBot(files))
        #expect(conversations.first?.steps.map { TranscriptTime.format($0.message.at) } == ["2026-11-30T15:00:00Z", "2026-11-30T15:00:30Z"])
        #expect(TranscriptReader.Timeline.defaultStart(in: TimeZone(identifier: "Asia/Shanghai")!) == TranscriptReader.Timeline.defaultStart)
        // An explicit timeline is taken as it is.
        let given = ReplayOptions(timeline: .init(start: try #require(TranscriptTime.parse("2026-12-01T08:00:00Z"))))
        let (_, again) = try replayText(line, bot: try replayBot(files), options: given)
        #expect(again.first?.steps.first.map { TranscriptTime.format($0.message.at) } == "2026-12-01T08:00:00Z")
    }
}

/// Counts conversations and drops them.
struct CountingWriter: ReplayReportWriter {
    var conversations = 0
    mutating func begin(_ header: ReplayHeader) {}
    mutating func add(_ conversation: ReplayConversation) { conversations += 1 }
    mutating func end(_ result: ReplayResult) {}
}

@Suite("replay: the decision budget")
struct ReplayBudgetTests {
    /// Twenty catastrophic regexes and a 1 ms budget: in the worker the budget would run out on
    /// the attack (how far depends on the machine's load); a replay decides every rule, so its
    /// report is the same on any machine.
    @Test func aReplayNeverRunsOutOfTheBudget() throws {
        var rules = "version: 1\nrules:\n"
        for i in 0..<20 {
            rules += "  - id: slow-\(i)\n    when: {regex: '(a+)+(?:z\(i))?$'}\n    then: [reply: \"slow \(i)\"]\n"
        }
        let bot = try replayBot(["b/bot.yaml": "bot: b\nrules: [rules.yaml]\nlimits: {decision_budget: 1ms}\n", "b/rules.yaml": rules])
        let attack = String(repeating: "a", count: 4_000) + "!"
        let line = #"{"conversation":"c","id":"1","at":"2026-11-30T10:00:00Z","from":"customer","text":"\#(attack)"}"#
        let (result, _) = try replayText(line + "\n", bot: bot)
        let budget = result.summary.regexLimitHits.filter { $0.limit.limit == "decision budget" }
        #expect(budget.isEmpty, "\(budget)")
        #expect(result.summary.customerMessages == 1)
    }
}
