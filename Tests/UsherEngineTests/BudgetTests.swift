import Foundation
import Testing
import UsherEngine
import UsherRules
import UsherTestSupport
import UsherText

/// The decision's time budget (`limits.decision_budget`), on a manual clock: when it runs out is
/// a fact of the clock's reads, not of the machine's speed.
@Suite("Engine: the decision's time budget")
struct BudgetTests {
    /// `count` rules, each a catastrophic regex of its own, then a rule without a regex.
    static func catastrophicRules(_ count: Int) -> String {
        var y = "version: 1\nrules:\n"
        for i in 1...count {
            y += "  - id: slow-\(i)\n    when: {regex: '(a+)+(?:z\(i))?$'}\n    then: [reply: \"slow \(i)\"]\n"
        }
        y += "  - id: order\n    when: {regex: 'a!'}\n    then: [reply: \"order\"]\n"
        y += "  - id: counted\n    when: {customer_messages: {at_least: 1}}\n    then: [reply: \"counted\"]\n"
        return y
    }

    static let message = String(repeating: "a", count: 40) + "!"

    @Test func onceSpentTheRemainingRegexesCountAsNoMatch() throws {
        var d = try Driver(Self.catastrophicRules(30), bot: "limits: {decision_budget: 10ms}\n")
        let clock = ManualClock(step: .milliseconds(1))
        d.clock = clock.clock
        let x = d.customer(Self.message)
        // The rule without a regex is still evaluated, and answers; 'order', which would match,
        // was not run.
        #expect(x.firedRules == ["counted"])
        let spent = try #require(x.budgetExhausted)
        #expect(spent.budget == .milliseconds(10))
        #expect(spent.rules == (1...30).map { "slow-\($0)" } + ["order"])
        // One event, for the rule where it ran out: the operator's lead, not one line per rule.
        #expect(x.events == [.regexLimit(rule: "slow-1", pattern: "(a+)+(?:z1)?$", limit: EngineEvent.decisionBudget)])
        let verdicts = Dictionary(uniqueKeysWithValues: (x.trace ?? []).map { ($0.rule, $0.verdict) })
        #expect(verdicts["slow-1"] == .notMatched("when: regex '(a+)+(?:z1)?$' ran out of the decision's time budget (10ms); counted as no match"))
        #expect(verdicts["slow-2"] == .notMatched("when: regex not run: the decision's time budget (10ms) was spent; counted as no match"))
        #expect(verdicts["order"] == .notMatched("when: regex not run: the decision's time budget (10ms) was spent; counted as no match"))
        #expect(clock.reads <= 12, "\(clock.reads) reads: the budget is not read rule by rule once spent")
    }

    @Test func withTimeLeftEveryRegexRuns() throws {
        // A frozen clock never runs out: the catastrophic regexes hit their match limits, and
        // 'order' fires.
        var d = try Driver(Self.catastrophicRules(3))
        d.clock = ManualClock().clock
        let x = d.customer(Self.message)
        #expect(x.firedRules == ["order"])
        #expect(x.budgetExhausted == nil)
        #expect(x.events.count == 3 && x.events.allSatisfy { if case .regexLimit(_, _, "match limit") = $0 { true } else { false } })
    }

    @Test func aLargerBudgetLastsLonger() throws {
        var d = try Driver(Self.catastrophicRules(3), bot: "limits:\n  decision_budget: 1s\n")
        #expect(d.ruleSet.bot.decisionBudget == .seconds(1))
        d.clock = ManualClock(step: .milliseconds(1)).clock
        let x = d.customer(Self.message)
        #expect(x.budgetExhausted == nil)
        #expect(x.firedRules == ["order"])
    }

    @Test func theDefaultBudgetIsTenMilliseconds() throws {
        #expect(try Driver(Self.catastrophicRules(1)).ruleSet.bot.decisionBudget == .milliseconds(10))
        #expect(BudgetExhaustion.text(.milliseconds(10)) == "10ms" && BudgetExhaustion.text(.seconds(2)) == "2s")
    }

    /// The worker's decision (candidates only, no trace) and explain's (every rule, traced) read
    /// the clock alike, so they spend the budget alike.
    @Test func tracedAndUntracedDecisionsSpendTheBudgetAlike() throws {
        let rs = try Driver(Self.catastrophicRules(20)).ruleSet
        let m = Message(id: "m", conversationID: "c", from: .customer, text: Self.message, at: Date(timeIntervalSince1970: 0))
        let fast = Engine.decide(rs, ConversationState(conversationID: "c"), m, now: m.at,
                                 options: .init(clock: ManualClock(step: .milliseconds(1)).clock))
        let full = Engine.decide(rs, ConversationState(conversationID: "c"), m, now: m.at,
                                 options: .init(trace: true, clock: ManualClock(step: .milliseconds(1)).clock))
        #expect(fast.budgetExhausted != nil)
        #expect(fast.budgetExhausted == full.budgetExhausted)
        #expect(fast.effects == full.effects && fast.events == full.events)
    }

    @Test func aBotWithoutRegexesNeverReadsTheClock() throws {
        var d = try Driver("version: 1\nrules:\n  - id: hi\n    when: {keywords: [hello]}\n    then: [reply: hi]\n")
        let clock = ManualClock(step: .seconds(1))
        d.clock = clock.clock
        #expect(d.customer("hello").firedRules == ["hi"])
        #expect(clock.reads == 0)
    }

    /// A regex whose required literal is absent is not run, so it costs no budget.
    @Test func prefilteredRegexesCostNothing() throws {
        var d = try Driver(Self.catastrophicRules(5) + "  - id: refund\n    when: {regex: 'refund(?<n>\\\\d+)'}\n    then: [reply: \"{{n}}\"]\n")
        let clock = ManualClock(step: .milliseconds(1))
        d.clock = clock.clock
        let x = d.customer("zzz")
        #expect(x.firedRules == ["counted"])
        #expect(x.budgetExhausted == nil)
        #expect(clock.reads == 1, "only the decision's start: \(clock.reads)")
    }
}
