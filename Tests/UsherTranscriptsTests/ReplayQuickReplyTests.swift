import Foundation
import Testing
import UsherEngine
import UsherRules
import UsherTranscripts

/// Replay shows a reply's buttons and links in every format.
@Suite struct ReplayQuickReplyTests {
    static let files = [
        "q/bot.yaml": "bot: q\ntimezone: UTC\nrules: [rules.yaml]\n",
        "q/rules.yaml": """
        version: 1
        rules:
          - id: help
            when: {keywords: [help]}
            then:
              - reply:
                  text: "Anything else?"
                  quick_replies: [Track my order, {title: "Returns <policy>", url: "https://shop.example/returns?a=1&b=2"}]
        """,
    ]
    static let transcript = """
    {"conversation":"c","id":"1","at":"2026-11-30T02:00:00Z","from":"customer","text":"help"}

    """

    func render(_ make: (ReportOutput) throws -> any ReplayReportWriter) throws -> String {
        try replayReport(Self.files, botPath: "q", transcript: Self.transcript, make)
    }

    @Test func textShowsThemUnderTheReply() throws {
        let lines = try render { ReportText($0) }.split(separator: "\n").map(String.init)
        let reply = try #require(lines.firstIndex { $0.contains("Anything else?  [help]") })
        #expect(lines[reply + 1].hasSuffix("buttons   [Track my order] [Returns <policy> → https://shop.example/returns?a=1&b=2]"))
    }

    @Test func jsonHasThemOnTheReplyEffect() throws {
        let json = try render { ReportJSON($0) }
        #expect(json.contains(#""text": "Anything else?", "rule": "help", "quick_replies": [{"title": "Track my order"}, {"title": "Returns <policy>", "url": "https://shop.example/returns?a=1&b=2"}]}"#))
    }

    @Test func htmlShowsButtonsAndLinksEscaped() throws {
        let html = try render { try ReportHTML($0) }
        #expect(html.contains(#"<div class="quick"><span class="qr">Track my order</span><a class="qr" href="https://shop.example/returns?a=1&amp;b=2" rel="noopener noreferrer">Returns &lt;policy&gt; ↗</a></div>"#))
    }
}
