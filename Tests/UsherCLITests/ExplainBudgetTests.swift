import Foundation
import Testing

/// `usher explain` on a message that spends the decision's time budget: the report says so, and
/// which rules it cost (issue 28, defect 5).
@Suite("usher explain: the time budget")
struct ExplainBudgetTests {
    @Test func aSpentBudgetIsShown() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-budget-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        // 100 regexes of about 2 ms each on 16 KB of a's: ten times the 10 ms budget at least.
        var rules = "version: 1\nrules:\n"
        for i in 1...100 { rules += "  - id: slow-\(i)\n    when: {regex: '(a+)+(?:z\(i))?$'}\n    then: [reply: \"slow\"]\n" }
        rules += "  - id: counted\n    when: {customer_messages: {at_least: 1}}\n    then: [reply: \"counted\"]\n"
        try Data("bot: attacked\nrules: [rules.yaml]\n".utf8).write(to: dir.appendingPathComponent("bot.yaml"))
        try Data(rules.utf8).write(to: dir.appendingPathComponent("rules.yaml"))
        let attack = String(repeating: "a", count: 16_383) + "!"

        let (status, text) = try runUsher(["explain", dir.path, attack])
        #expect(status == 0)
        #expect(text.contains("warning: the decision spent its time budget (10ms, limits.decision_budget in bot.yaml) at rule 'slow-"), "\(text.suffix(800))")
        #expect(text.contains("regex not run: the decision's time budget (10ms) was spent; counted as no match"))
        #expect(text.contains("reply    \"counted\"  (counted)"), "a rule without a regex still fires")

        let (jsonStatus, json) = try runUsher(["explain", dir.path, attack, "--format", "json"])
        #expect(jsonStatus == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let spent = try #require(object["budget_exhausted"] as? [String: Any])
        #expect(spent["budget"] as? String == "10ms")
        let starved = try #require(spent["rules"] as? [String])
        #expect(starved.count >= 2 && starved.last == "slow-100")
    }
}
