import Foundation
import Testing
import UsherEngine
import UsherTranscripts

/// Renders `transcript` replayed by the test bot (and the other bot with `against`) with `make`.
func report(_ transcript: String, against: Bool = false, options: ReplayOptions = .init(),
            _ make: (ReportOutput) throws -> any ReplayReportWriter) throws -> String {
    let dir = try replayScratch()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = try replayWrite(Array(transcript.utf8), "t.jsonl", in: dir)
    let runner = ReplayRunner(bot: try replayBot(), botPath: "r", against: against ? try replayBot(replayOtherBotFiles) : nil,
                              againstPath: "o", transcripts: ["t.jsonl"], options: options)
    let out = ReportOutput()
    var writer = try make(out)
    _ = try runner.run([path], into: &writer)
    out.flush()
    return out.text
}

/// Customer text that tries to break out of HTML, with an agent in between.
let hostileTranscript = """
{"conversation":"c-<x>","id":"1","at":"2026-11-30T02:00:00Z","from":"customer","sender_name":"<img src=x onerror=alert(1)>","text":"hi <script>alert('x')</script> & \\"quotes\\""}
{"conversation":"c-<x>","id":"2","at":"2026-11-30T02:00:10Z","from":"agent","text":"</div></details><b>agent</b>"}
{"conversation":"plain","id":"1","at":"2026-11-30T02:00:20Z","from":"customer","text":"I want a refund"}

"""

@Suite("replay reports")
struct ReportTests {
    @Test func jsonSchema() throws {
        let text = try report(knownTranscript, against: true) { ReportJSON($0) }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(root["schema_version"] as? Int == 1 && ReportJSON.schemaVersion == 1)
        #expect(Set(root.keys) == ["schema_version", "generator", "bot", "against", "options", "transcripts",
                                   "conversations", "summary", "against_summary", "differences", "input"])
        let bot = try #require(root["bot"] as? [String: Any])
        #expect(Set(bot.keys) == ["id", "name", "path", "rule_set_version", "rules", "fallback"])
        #expect(bot["id"] as? String == "r" && bot["rules"] as? Int == 5)
        let options = try #require(root["options"] as? [String: Any])
        #expect(options["agents"] as? String == "takeover" && options["turns_start"] as? String == "2026-11-30T10:00:00Z")

        let conversations = try #require(root["conversations"] as? [[String: Any]])
        #expect(conversations.map { $0["id"] as? String } == ["c-1", "c-2", "c-3"])
        #expect(Set(conversations[0].keys) == ["id", "file", "line", "format", "part", "messages", "customer_messages", "replies",
                                               "handoffs", "takeover_step", "spoke_over_human", "differences", "against_handoffs", "steps"])
        let steps = try #require(conversations[0]["steps"] as? [[String: Any]])
        #expect(steps.count == 7)
        #expect(Set(steps[0].keys) == ["step", "line", "id", "at", "from", "sender_id", "sender_name", "text", "human_had_written",
                                       "spoke_over_human", "bot", "differs", "against"])
        #expect(steps[0]["at"] as? String == "2026-11-30T02:00:00Z" && steps[0]["sender_name"] as? String == "Pooja")
        #expect(steps[0]["sender_id"] is NSNull)
        let decision = try #require(steps[3]["bot"] as? [String: Any])
        #expect(Set(decision.keys) == ["outcome", "fired", "session", "customer_message", "owner_before", "effects"])
        #expect(decision["outcome"] as? String == "fired" && decision["fired"] as? [String] == ["threshold"])
        // Effects have the shape of `usher explain --format json`.
        let effects = try #require(decision["effects"] as? [[String: String]])
        let expected = [Effect.system(text: "Connecting you to an agent.", rule: "threshold"),
                        .handoff(reason: "threshold", queue: "general", priority: .normal, rule: "threshold")]
        #expect(effects == expected.map { DecisionJSON.effect($0) as! [String: String] })
        #expect((steps[5]["bot"] as? [String: Any])?["outcome"] as? String == "takeover")

        let summary = try #require(root["summary"] as? [String: Any])
        #expect(Set(summary.keys) == ["bot", "conversations", "messages", "decided", "silent", "agent_messages_not_fed", "replies",
                                      "system_notices", "conversations_with_replies", "handoffs", "takeovers", "spoke_over_human",
                                      "rules", "never_fired", "regex_limits", "truncated_messages"])
        #expect(summary["conversations"] as? Int == 3 && summary["replies"] as? Int == 4)
        let handoffs = try #require(summary["handoffs"] as? [String: Any])
        #expect(handoffs["by_customer_message"] as? [String: Int] == ["1": 1, "4": 1])
        #expect(handoffs["by_reason"] as? [String: Int] == ["threshold": 1, "asked-for-human": 1])
        #expect(summary["never_fired"] as? [String] == ["never"])
        let rules = try #require(summary["rules"] as? [[String: Any]])
        #expect(rules.map { $0["id"] as? String } == ["wants-human", "threshold", "refund", "never", "opening"])

        let differences = try #require(root["differences"] as? [String: Any])
        #expect(differences["messages"] as? Int == 5 && differences["conversations"] as? Int == 2)
        let transitions = try #require(differences["transitions"] as? [[String: Any]])
        #expect(transitions.count == 5)
        #expect(Set(transitions[0].keys) == ["from", "to", "messages", "conversations", "examples"])
        let input = try #require(root["input"] as? [String: Any])
        #expect(input["records"] as? Int == 11 && input["peak_conversations_in_memory"] as? Int == 3)
    }

    @Test func jsonWithoutAgainstHasNulls() throws {
        let text = try report(knownTranscript, options: ReplayOptions(agents: .ignore)) { ReportJSON($0, conversations: false) }
        let root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(root["against"] is NSNull && root["against_summary"] is NSNull && root["differences"] is NSNull)
        #expect((root["conversations"] as? [Any])?.isEmpty == true)
        #expect(((root["summary"] as? [String: Any])?["spoke_over_human"] as? [String: Any])?["messages"] as? Int == 1)
    }

    @Test func htmlIsOneSelfContainedPageWithChartsAndEveryConversation() throws {
        let html = try report(knownTranscript + hostileTranscript, against: true) { try ReportHTML($0) }
        func count(_ s: String) -> Int { html.components(separatedBy: s).count - 1 }
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(count("<html") == 1 && count("</html>") == 1 && count("<body>") == 1 && count("</body>") == 1)
        #expect(count("<head>") == 1 && count("<title>Replay of r against o</title>") == 1)
        #expect(count("<svg ") == 2 && count("</svg>") == 2)
        #expect(count("aria-label=\"Hits per rule\"") == 2 && count("aria-label=\"Handoffs by customer message\"") == 2)
        // Self-contained: nothing is loaded from elsewhere, and the policy forbids it.
        #expect(html.contains("Content-Security-Policy\" content=\"default-src 'none'"))
        for external in ["src=\"http", "href=\"http", "@import", "url(", "<link"] { #expect(!html.contains(external), "\(external)") }
        // Every conversation is there, as a <details> that reads without script.
        for id in ["c-1", "c-2", "c-3", "plain", "c-&lt;x&gt;"] {
            #expect(html.contains("<span class=\"cid\">\(id)</span>"), "\(id)")
        }
        #expect(count("<details class=\"conv\"") == 5 && count("</details>") == 5)
        #expect(count("<div class=\"msg customer\">") == 11)
        // The only script is ours; customer and agent text is escaped.
        #expect(count("<script>") == 1 && count("</script>") == 1)
        #expect(html.contains("hi &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(html.contains("&lt;/div&gt;&lt;/details&gt;&lt;b&gt;agent&lt;/b&gt;"))
        #expect(!html.contains("<img") && !html.contains("<b>agent"))
        // Bot messages carry their rule; differences are shown.
        #expect(html.contains("<div class=\"bubble\">Hi!</div><div class=\"meta\"><span class=\"rule\">opening</span>"))
        #expect(html.contains("<span class=\"rule\">o: fallback</span>"))
        #expect(html.contains("Differences: <code>r</code> → <code>o</code>"))
        #expect(html.contains("<code class=\"never-chip\">never</code>"))
    }

    /// `--against` a second version of the same bot: both named by folder, each with its cards
    /// and charts, on one scale; no column wider than a phone; one hit visible beside hundreds.
    @Test func htmlAgainstShowsBothSidesNamedByFolder() throws {
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try replayWrite(Array(knownTranscript.utf8), "t.jsonl", in: dir)
        let next = replayBotFiles.mapValues { $0.replacingOccurrences(of: "at_least: 4", with: "at_least: 3") }
        let runner = ReplayRunner(bot: try replayBot(), botPath: "bots/r", against: try replayBot(next), againstPath: "/tmp/r-next",
                                  transcripts: ["t.jsonl"])
        let out = ReportOutput()
        var w = try ReportHTML(out, conversations: false)
        _ = try runner.run([path], into: &w)
        out.flush()
        let html = out.text
        func count(_ s: String) -> Int { html.components(separatedBy: s).count - 1 }
        #expect(html.contains("<title>Replay of bots/r against /tmp/r-next</title>"))
        #expect(html.contains("<h1>Replay of <code>bots/r</code> against <code>/tmp/r-next</code></h1>"))
        #expect(count("<section class=\"cards side-bot\">") == 1 && count("<section class=\"cards side-other\">") == 1)
        #expect(html.contains("<h2 class=\"side-name side-other\"><code>/tmp/r-next</code></h2>"))
        #expect(count("<figure class=\"chart side-bot\">") == 2 && count("<figure class=\"chart side-other\">") == 2)
        #expect(html.contains("<figcaption>Hits per rule · <code>/tmp/r-next</code></figcaption>"))
        #expect(count("<div class=\"bars\" role=\"img\" aria-label=\"Hits per rule\">") == 2 && count("<svg ") == 2)
        // One scale for both sides: opening's 3 hits are the longest bar of either.
        #expect(html.contains("<span class=\"bar\" style=\"width:100.0%\" title=\"opening: 3\">"))
        // Every grid column may shrink to the page: a fixed minimum wider than a phone is not allowed.
        let fixed = html.matches(of: /minmax\((\d+)px/).compactMap { Int($0.output.1) }.filter { $0 > 200 }
        #expect(fixed.isEmpty, "grid minimums wider than a phone: \(fixed)")
        #expect(html.contains(".bars .bar{display:block;height:100%;min-width:4px"))
    }

    @Test func htmlMarksWhereTheBotSpokeOverAHuman() throws {
        let html = try report(knownTranscript, options: ReplayOptions(agents: .ignore)) { try ReportHTML($0) }
        #expect(html.components(separatedBy: "⚠ a human had already written").count - 1 == 1)
        #expect(html.contains("agent · not given to the bot"))
    }

    @Test func textShowsEachConversationThenTheSummary() throws {
        let text = try report(knownTranscript) { ReportText($0) }
        #expect(!text.contains("\u{1B}["))
        #expect(text.contains("""
        c-1  t.jsonl:1 · 2026-11-30  6 customer messages, 3 replies, handoff at customer message 4 (threshold), agent took over after customer message 5
          02:00:00  customer 1   hello
                      ↳ reply     Hi!  [opening]
        """))
        #expect(text.contains("""
          02:01:30  customer 4   still nothing
                      ↳ system    Connecting you to an agent.  [threshold]
                      ↳ handoff   threshold, queue general  [threshold]
          02:02:00  customer 5   hello??
                      ↳ silent    waiting for an agent
          02:02:30  agent        Hi, Li here
                      ↳ takeover  an agent took over; the bot is silent from here
        """))
        #expect(text.contains("  conversations             3   from 1 transcript\n"))
        #expect(text.contains("  customer messages         9   rules evaluated on 6, silent on 3 (waiting 1, agent 2)\n"))
        #expect(text.contains("  handoffs                  2   in 2 conversations: asked-for-human 1, threshold 1\n"))
        #expect(text.contains("Rules by hits (4 of 5 rules fired)\n  opening           3  ██████████████████████████████\n"))
        #expect(text.contains("Never fired (1):\n  never\n"))
        let colour = try report(knownTranscript) { ReportText($0, colour: true, conversations: false) }
        #expect(colour.contains("\u{1B}[1m") && !colour.contains("c-1  "))
    }

    /// The fallback is not a rule: the report counts rules as `usher check` does (3 here, not 4).
    @Test func rulesAreCountedAsCheckCountsThem() throws {
        let (r, _) = try replayText(knownTranscript, bot: try replayBot(replayOtherBotFiles))
        #expect(r.summary.ruleCount == 3 && r.summary.ruleIDs.count == 4)
        #expect(r.summary.rulesFiredText == "3 of 3 rules fired, and the fallback")
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try replayWrite(Array(knownTranscript.utf8), "t.jsonl", in: dir)
        for html in [true, false] {
            let out = ReportOutput()
            let runner = ReplayRunner(bot: try replayBot(replayOtherBotFiles), botPath: "o", transcripts: ["t.jsonl"])
            if html {
                var w = try ReportHTML(out, conversations: false)
                _ = try runner.run([path], into: &w)
            } else {
                var w = ReportText(out, conversations: false)
                _ = try runner.run([path], into: &w)
            }
            out.flush()
            #expect(out.text.contains(html ? "<div class=\"v\">3/3</div><div class=\"l\">rules fired</div><div class=\"n\">0 never fired; the fallback answered</div>"
                                           : "Rules by hits (3 of 3 rules fired, and the fallback)\n"))
        }
    }

    @Test func textCutsLongMessagesOnOneLine() throws {
        let long = String(repeating: "word ", count: 60)
        let line = #"{"conversation":"c","id":"1","at":"2026-11-30T02:00:00Z","from":"customer","text":"line one\n\tline   two \#(long)"}"#
        let text = try report(line + "\n") { ReportText($0) }
        let shown = try #require(text.split(separator: "\n").first { $0.contains("customer 1") })
        // 99 characters and "…", cut inside a word.
        #expect(shown.hasSuffix("   line one line two " + String(repeating: "word ", count: 16) + "w…"))
        let message = shown.components(separatedBy: "customer 1   ")[1]
        #expect(message.unicodeScalars.count == 100)
    }
}
