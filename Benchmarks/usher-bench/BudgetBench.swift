import Foundation
import UsherBenchSupport
import UsherEngine
import UsherRules

/// `usher-bench --only budget`: the time of one decision, decision by decision, for a bot with
/// 500 catastrophic regexes fed attack messages (issue 28: `(a+)+(?:zN)?$` against 16 KB of a's),
/// beside `bots/support` on its realistic messages, in the same run; then a few decisions of the
/// attacked bot with a budget of 60 s, which is none in effect, for scale.
enum BudgetBench {
    /// The attacked bot: 500 rules of a catastrophic regex each, then a greeting.
    static func attackedBot(budget: String?) -> RuleSet {
        var rules = "version: 1\nrules:\n"
        for i in 1...500 {
            rules += "  - id: slow-\(i)\n    when: {regex: '(a+)+(?:z\(i))?$'}\n    then: [reply: \"slow \(i)\"]\n"
        }
        rules += "  - id: hello\n    when: {keywords: [hello]}\n    then: [reply: \"hi\"]\n"
        let bot = "bot: attacked\ntimezone: UTC\nrules: [rules.yaml]\n" + (budget.map { "limits: {decision_budget: \($0)}\n" } ?? "")
        guard let rs = RuleSetLoader.loadBot(botPath: "attacked/bot.yaml", files: ["attacked/bot.yaml": bot, "attacked/rules.yaml": rules]).ruleSet else {
            print("the attacked bot did not load"); exit(1)
        }
        return rs
    }

    /// Each decision of `texts` (in turn, `count` in all) timed alone, from a fresh state; and
    /// how many spent their budget.
    static func decisions(_ rs: RuleSet, _ texts: [String], count: Int) -> (Samples, flagged: Int) {
        var samples = Samples()
        var flagged = 0
        let at = Date(timeIntervalSince1970: 1_764_468_000)
        for i in 0..<count {
            let m = Message(id: "m\(i)", conversationID: "c\(i)", from: .customer, text: texts[i % texts.count], at: at)
            let start = ContinuousClock.now
            let d = Engine.decide(rs, ConversationState(conversationID: "c\(i)"), m, now: at)
            samples.add((ContinuousClock.now - start) / .milliseconds(1))
            if d.budgetExhausted != nil { flagged += 1 }
        }
        return (samples, flagged)
    }

    static func line(_ what: String, _ s: Samples, flagged: Int? = nil) -> String {
        "  \(what.padding(toLength: 44, withPad: " ", startingAt: 0)) p50 \(fmt(s.p50, 3)) ms  p99 \(fmt(s.p99, 3)) ms  max \(fmt(s.max, 3)) ms  (n = \(s.count)"
            + (flagged.map { ", \($0) flagged" } ?? "") + ")"
    }

    static func run(quick: Bool) {
        let attacked = attackedBot(budget: nil)
        let budget = attacked.bot.decisionBudget
        guard let support = RuleSetLoader.loadBot(at: "bots/support").ruleSet else { print("bots/support did not load"); exit(1) }
        let long = String(repeating: "a", count: 16_383) + "!"
        let short = String(repeating: "a", count: 200) + "!"
        let n = quick ? 40 : 300
        print("decision time, one decision at a time (budget \(BudgetExhaustion.text(budget)); goal: max ≤ budget + 1 ms):")
        let (a16, f16) = decisions(attacked, [long], count: n)
        print(line("500 catastrophic regexes, 16 KB attack", a16, flagged: f16))
        let (a200, f200) = decisions(attacked, [short], count: n)
        print(line("500 catastrophic regexes, 201-byte attack", a200, flagged: f200))
        let (mixed, fm) = decisions(attacked, [long, "hello", short, "hello there"], count: n)
        print(line("500 catastrophic regexes, attacks and hellos", mixed, flagged: fm))
        let (s, _) = decisions(support, messages, count: quick ? 20_000 : 200_000)
        print(line("bots/support (\(support.rules.count) rules), 75-byte messages", s))
        let (off, _) = decisions(attackedBot(budget: "60s"), [long], count: quick ? 1 : 3)
        print(line("500 catastrophic regexes, 16 KB, budget 60s", off))
    }
}
