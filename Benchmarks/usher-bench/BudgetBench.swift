import Foundation
import UsherBenchSupport
import UsherEngine
import UsherRules
import UsherTestSupport

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

    /// What `decisions` measured: wall time and the thread's CPU time of each decision, and
    /// how many spent their budget.
    struct Measured {
        var wall = Samples()
        var cpu = Samples()
        var flagged = 0
    }

    /// Each decision of `texts` (in turn, `count` in all) timed alone, from a fresh state. The
    /// budget is wall time; the CPU time beside it tells a decision that overran from one whose
    /// thread waited for a core (the machine is shared).
    static func decisions(_ rs: RuleSet, _ texts: [String], count: Int) -> Measured {
        var out = Measured()
        let at = Date(timeIntervalSince1970: 1_764_468_000)
        for i in 0..<count {
            let m = Message(id: "m\(i)", conversationID: "c\(i)", from: .customer, text: texts[i % texts.count], at: at)
            var d: Decision?
            let start = ContinuousClock.now
            let cpu = cpuTime { d = Engine.decide(rs, ConversationState(conversationID: "c\(i)"), m, now: at) }
            out.wall.add((ContinuousClock.now - start) / .milliseconds(1))
            out.cpu.add(cpu / .milliseconds(1))
            if d?.budgetExhausted != nil { out.flagged += 1 }
        }
        return out
    }

    static func line(_ what: String, _ m: Measured, flagged: Bool = true) -> String {
        let w = m.wall, c = m.cpu
        return "  \(what.padding(toLength: 44, withPad: " ", startingAt: 0)) wall p50 \(fmt(w.p50, 3)) ms  p99 \(fmt(w.p99, 3)) ms  max \(fmt(w.max, 3)) ms;"
            + " CPU p99 \(fmt(c.p99, 3)) ms  max \(fmt(c.max, 3)) ms  (n = \(w.count)" + (flagged ? ", \(m.flagged) flagged" : "") + ")"
    }

    static func run(quick: Bool) {
        let attacked = attackedBot(budget: nil)
        let budget = attacked.bot.decisionBudget
        guard let support = RuleSetLoader.loadBot(at: "bots/support").ruleSet else { print("bots/support did not load"); exit(1) }
        let long = String(repeating: "a", count: 16_383) + "!"
        let short = String(repeating: "a", count: 200) + "!"
        let n = quick ? 40 : 300
        print("decision time, one decision at a time (budget \(BudgetExhaustion.text(budget)); goal: max ≤ budget + 1 ms):")
        print(line("500 catastrophic regexes, 16 KB attack", decisions(attacked, [long], count: n)))
        print(line("500 catastrophic regexes, 201-byte attack", decisions(attacked, [short], count: n)))
        print(line("500 catastrophic regexes, attacks and hellos", decisions(attacked, [long, "hello", short, "hello there"], count: n)))
        print(line("bots/support (\(support.rules.count) rules), 75-byte messages", decisions(support, messages, count: quick ? 20_000 : 200_000),
                   flagged: false))
        print(line("500 catastrophic regexes, 16 KB, budget 60s", decisions(attackedBot(budget: "60s"), [long], count: quick ? 1 : 3)))
    }
}
