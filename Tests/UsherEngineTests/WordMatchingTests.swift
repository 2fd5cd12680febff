import Testing
import UsherEngine
import UsherRules

/// Keywords matching other forms of their words and typos, as a decision sees them.
@Suite struct WordMatchingTests {
    static let rules = """
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund, money back]}
        then: [reply: "refund"]
      - id: cancel
        when: {keywords: [cancel]}
        then: [reply: "cancel"]
      - id: exact
        exact: true
        when: {keywords: [parcel]}
        then: [reply: "parcel"]
    fallback: [reply: "fallback"]
    """

    @Test func formsFireAndTheTraceSaysHow() throws {
        var d = try Driver(Self.rules, bot: "language: en\nmatching: {word_forms: true}\n")
        let decision = d.customer("I want my refunds")
        #expect(decision.firedRules == ["refund"])
        let trace = try #require(decision.trace?.first { $0.rule == "refund" })
        #expect(trace.matched == "matched 'refund' (form of 'refunds')")
        #expect(d.customer("cancelling it").firedRules == ["cancel"])
        #expect(d.customer("MONEY BACKS").firedRules == ["refund"])
        #expect(d.customer("two parcels").firedRules == ["fallback"])
        #expect(d.customer("cancer").firedRules == ["fallback"])
    }

    @Test func typosFireAndTheTraceSaysHow() throws {
        var d = try Driver(Self.rules, bot: "language: en\nmatching: {word_forms: true, typos: true}\n")
        let decision = d.customer("I want a refnd")
        #expect(decision.firedRules == ["refund"])
        #expect(try #require(decision.trace?.first { $0.rule == "refund" }).matched == "matched 'refund' (typo of 'refnd')")
        #expect(d.customer("cancle it").firedRules == ["cancel"])
        // Spelled right, so not a typo; and "card" is never "cart".
        #expect(d.customer("cancer").firedRules == ["fallback"])
        #expect(d.customer("a parcle").firedRules == ["fallback"])   // the rule says exact: true
    }

    @Test func typosOffByDefault() throws {
        var d = try Driver(Self.rules, bot: "language: en\nmatching: {word_forms: true}\n")
        #expect(d.customer("I want a refnd").firedRules == ["fallback"])
    }

    @Test func exactMatchesSayNothingMore() throws {
        var d = try Driver(Self.rules, bot: "language: en\nmatching: {word_forms: true}\n")
        let decision = d.customer("a refund please")
        #expect(try #require(decision.trace?.first { $0.rule == "refund" }).matched == nil)
    }

    @Test func withoutMatchingOnlyTheWordsAsWritten() throws {
        var d = try Driver(Self.rules, bot: "language: en\n")
        #expect(d.customer("I want my refunds").firedRules == ["fallback"])
        #expect(d.customer("I want my refund").firedRules == ["refund"])
    }

    /// The worker decides without a trace: the same rules fire.
    @Test func tracedAndUntracedAgree() throws {
        let d = try Driver(Self.rules, bot: "language: en\nmatching: {word_forms: true, typos: true}\n")
        for text in ["refunds", "cancelled", "parcels", "moneys back", "hello", "refnd", "cancer"] {
            let m = Message(id: "m", conversationID: "c", from: .customer, text: text, at: d.now)
            let traced = Engine.decide(d.ruleSet, d.state, m, now: d.now, options: .init(trace: true))
            let untraced = Engine.decide(d.ruleSet, d.state, m, now: d.now)
            #expect(traced.firedRules == untraced.firedRules, "\(text)")
        }
    }
}
