import Foundation
import Testing
import UsherEngine
import UsherRules
import UsherTestSupport

let seed = """
version: 1
rules:
  - id: wants-human
    priority: 100
    when: {keywords: [human, agent, 人工, 转人工]}
    then: [handoff: {reason: asked-for-human}]
  - id: refund
    priority: 10
    when:
      any:
        - keywords: [refund, money back, 退款]
        - regex: '\\bcharge\\s?back\\b'
    unless: {keywords: [thanks, thank you]}
    once: true
    then: [reply: "I can help with refunds. What's your order number?"]
  - id: order-number
    priority: 10
    when: {regex: '(?<order>\\b\\d{3}-\\d{7}-\\d{7}\\b)'}
    cooldown: 10m
    then:
      - reply: "Thanks, I've noted order {{order}}."
      - tag: has-order
  - id: opening
    when: {customer_messages: {at_most: 3}}
    then:
      - reply:
          sequence:
            - "Hi there! How can we assist you today?"
            - "Thanks for reaching out—we're here to help."
            - "One moment while we review your request..."
  - id: threshold
    when: {customer_messages: {at_least: 4}}
    then: [handoff: {reason: threshold}]
"""
let handoffText = "system: Thanks for your question! We're connecting you to a support agent now."

@Suite("Engine: DESIGN.md §3 evaluation order")
struct EngineTests {
    @Test func seedSequenceThenHandoffThenSilence() throws {
        var d = try Driver(seed, bot: "session: {idle_reset: 24h}\n")
        #expect(d.customer("hello").summary == ["reply: Hi there! How can we assist you today?"])
        #expect(d.customer("are you there").summary == ["reply: Thanks for reaching out—we're here to help."])
        #expect(d.customer("???").summary == ["reply: One moment while we review your request..."])
        let fourth = d.customer("still nothing")
        #expect(fourth.summary == [handoffText, "handoff: threshold"])
        #expect(fourth.state.owner == .waiting)
        #expect(d.customer("hello?").outcome == .silent(.waiting))
        #expect(d.send(.agent, "Hi, I'm Li. How can I help?").outcome == .takeover)
        #expect(d.customer("my parcel is late").outcome == .silent(.agent))
        d.wait(25 * 3600)
        let again = d.customer("hi again")
        #expect(again.firedRules == ["opening"])
        #expect(again.state.customerMessages == 1)
        #expect(again.state.session == 2)
    }

    @Test func keywordRepliesCountTowardsTheThreshold() throws {
        var d = try Driver(seed)
        #expect(d.customer("I want a refund").firedRules == ["refund"])
        #expect(d.customer("hello").summary == ["reply: Hi there! How can we assist you today?"])
        #expect(d.customer("hm").firedRules == ["opening"])
        #expect(d.customer("ok").firedRules == ["threshold"])
    }

    @Test func ownBotAndSystemMessagesAreIgnored() throws {
        var d = try Driver(seed)
        let before = d.state
        #expect(d.send(.customer, "refund", senderID: "bot:test").outcome == .ignored("the bot's own message"))
        #expect(d.send(.bot, "refund").outcome == .ignored("a message from another bot"))
        #expect(d.send(.system, "refund").outcome == .ignored("a system notice"))
        #expect(d.state == before)
    }

    @Test func agentMessageAloneIsATakeover() throws {
        var d = try Driver(seed)
        d.customer("hello")
        #expect(d.send(.agent, "I'm here").outcome == .takeover)
        #expect(d.state.owner == .agent)
        let silent = d.customer("I want to talk to a human")
        #expect(silent.effects.isEmpty)
        #expect(silent.state.customerMessages == 2, "counters are updated even when silent")
    }

    @Test func askingForAHumanHandsOffAtOnceInChinese() throws {
        var d = try Driver(seed)
        let x = d.customer("我要转人工")
        #expect(x.firedRules == ["wants-human"])
        #expect(x.handoff?.reason == "asked-for-human")
        #expect(x.handoff?.queue == "general")
        #expect(x.effects.contains(.notify(text: "A customer is waiting for an agent (asked-for-human)", queue: "general", reason: "asked-for-human", rule: "wants-human")))
    }

    @Test func onceIsPerSession() throws {
        var d = try Driver(seed, bot: "session: {idle_reset: 1h}\n")
        #expect(d.customer("refund please").firedRules == ["refund"])
        let second = d.customer("refund!!")
        #expect(second.firedRules == ["opening"])
        #expect(second.trace?.first { $0.rule == "refund" }?.verdict == .blocked("once: already fired in this session"))
        d.wait(2 * 3600)
        #expect(d.customer("refund").firedRules == ["refund"])
    }

    @Test func unlessVetoes() throws {
        var d = try Driver(seed)
        #expect(d.customer("refund done, thank you").firedRules == ["opening"])
    }

    @Test func regexCapturesFillTemplatesAndCooldownBlocks() throws {
        var d = try Driver(seed)
        let x = d.customer("order 502-2345678-9012345 is late")
        #expect(x.summary == ["reply: Thanks, I've noted order 502-2345678-9012345."])
        #expect(x.state.tags == ["has-order"])
        let y = d.customer("again 502-2345678-9012345")
        #expect(y.firedRules == ["opening"])
        guard case let .blocked(why)? = y.trace?.first(where: { $0.rule == "order-number" })?.verdict else {
            Issue.record("order-number should be blocked by its cooldown"); return
        }
        #expect(why == "cooldown: fired 1s ago, cooldown is 10m")
    }

    @Test func chargebackRegexIsPartOfAny() throws {
        var d = try Driver(seed)
        #expect(d.customer("I will do a chargeback").firedRules == ["refund"])
    }

    @Test func fallbackAndFallbacksInARow() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: give-up
            when: {fallbacks_in_a_row: {at_least: 2}}
            then: [handoff: {reason: not-understood}]
          - id: hello
            when: {keywords: [hello]}
            then: [reply: "Hello!"]
        fallback:
          - reply: ["Sorry, I didn't catch that.", "Could you say that another way?"]
        """)
        let a = d.customer("blah")
        #expect(a.outcome == .fallback)
        #expect(a.state.fallbacksInARow == 1)
        #expect(d.customer("hello").state.fallbacksInARow == 0)
        let b = d.customer("blah")
        #expect(b.outcome == .fallback)
        #expect(Set(a.replies + b.replies).count == 2, "variants rotate: \(a.replies) \(b.replies)")
        d.customer("blah blah")
        #expect(d.customer("???").firedRules == ["give-up"])
    }

    @Test func variantsRotateDeterministicallyPerConversation() throws {
        let rules = """
        version: 1
        rules:
          - id: any
            then: [reply: ["a", "b", "c"]]
        """
        func replies(_ conversation: String) throws -> [String] {
            var d = try Driver(rules, conversation: conversation)
            return (0..<4).flatMap { _ in d.customer("x").replies }
        }
        let one = try replies("c-1")
        #expect(try replies("c-1") == one)
        #expect(Set(one.prefix(3)) == ["a", "b", "c"])
        #expect(one[3] == one[0])
        let starts = try Set((0..<20).map { try replies("conv-\($0)")[0] })
        #expect(starts.count > 1, "different conversations start at different variants")
    }

    @Test func sequenceRepeatsItsLastText() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: s
            then: [reply: {sequence: ["one", "two"]}]
        """)
        #expect((0..<3).flatMap { _ in d.customer("x").replies } == ["one", "two", "two"])
    }

    @Test func maxBotRepliesHandsOffInstead() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: echo
            then: [reply: "ok"]
        """, bot: "limits: {max_bot_replies: 2}\n")
        d.customer("a"); d.wait(60)
        d.customer("b"); d.wait(60)
        let third = d.customer("c")
        #expect(third.summary == [handoffText, "handoff: max-bot-replies"])
        #expect(third.state.botReplies == 2)
    }

    @Test func loopGuardHandsOff() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: echo
            then: [reply: "ok"]
        """, bot: "limits: {loop_guard: {replies: 3, within: 1m}}\n")
        for _ in 0..<3 { #expect(d.customer("x").replies == ["ok"]) }
        let fourth = d.customer("x")
        #expect(fourth.summary == [handoffText, "handoff: loop-guard"])
        // The decision names the limit, and what it dropped.
        let limit = try #require(fourth.limit)
        #expect(limit.description == "loop guard: 3 replies within 1m" && limit.reason == "loop-guard")
        #expect(limit.rules == ["echo"] && limit.handedOff)
        // Slower traffic never trips it.
        var slow = try Driver("version: 1\nrules:\n  - id: echo\n    then: [reply: ok]\n", bot: "limits: {loop_guard: {replies: 3, within: 1m}}\n")
        for _ in 0..<10 { #expect(slow.customer("x").replies == ["ok"]); slow.wait(30) }
    }

    /// Why an `any` did not hold, without a double negative ("none of: no tag of …").
    @Test func anAnyThatFailsSaysWhyEachAlternativeFails() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: two
            when: {any: [{tags: [has-order]}, {keywords: [order]}]}
            then: [reply: "ok"]
          - id: three
            when: {any: [{tags: [vip, gold]}, {customer_messages: 5}, {keywords: [order]}]}
            then: [reply: "ok"]
        """)
        let trace = d.customer("hello").trace ?? []
        #expect(trace.map(\.verdict) == [
            .notMatched("when: both alternatives fail: tag 'has-order' is not set; no keyword of ['order']"),
            .notMatched("when: all 3 alternatives fail: none of the tags [vip, gold] is set; customer_messages is 1, needs exactly 5; no keyword of ['order']"),
        ])
    }

    @Test func loopGuardNoticeIsConfigurable() throws {
        var d = try Driver("version: 1\nrules:\n  - id: echo\n    then: [reply: ok]\n",
                           bot: "limits:\n  loop_guard: {replies: 1, within: 1m, message: \"Hold on, {{customer.name}}: a person will answer.\"}\n")
        #expect(d.customer("x", name: "Ana").replies == ["ok"])
        let second = d.customer("x")
        #expect(second.summary == ["system: Hold on, Ana: a person will answer.", "handoff: loop-guard"])
        #expect(second.limit?.description == "loop guard: 1 reply within 1m")
        // max_bot_replies keeps the bot's handoff message, and names itself too.
        var capped = try Driver("version: 1\nrules:\n  - id: echo\n    then: [reply: ok]\n", bot: "limits: {max_bot_replies: 1}\n")
        capped.customer("x")
        let over = capped.customer("x")
        #expect(over.summary == [handoffText, "handoff: max-bot-replies"])
        #expect(over.limit?.description == "max_bot_replies: 1 reply a session")
    }

    @Test func whileWaitingRulesSpeakWithCooldown() throws {
        var d = try Driver(seed.replacingOccurrences(of: "rules:\n", with: """
        rules:
          - id: waiting
            while_waiting: true
            cooldown: 5m
            then: [reply: "An agent will be with you shortly."]

        """))
        d.customer("human please")
        #expect(d.state.owner == .waiting)
        #expect(d.customer("hello?").replies == ["An agent will be with you shortly."])
        #expect(d.customer("hello??").outcome == .silent(.waiting))
        d.wait(300)
        #expect(d.customer("anyone?").replies == ["An agent will be with you shortly."])
    }

    @Test func priorityTiesKeepFileOrderAndContinueFiresSeveral() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: first
            when: {keywords: [x]}
            continue: true
            then: [tag: seen-x]
          - id: second
            when: {keywords: [x]}
            then: [reply: "second"]
          - id: third
            when: {keywords: [x]}
            then: [reply: "third"]
          - id: top
            priority: 5
            when: {keywords: [x]}
            continue: true
            then: [set: {last: "{{conversation.customer_messages}}"}]
        """)
        let x = d.customer("x")
        #expect(x.firedRules == ["top", "first", "second"])
        #expect(x.replies == ["second"])
        #expect(x.state.metadata == ["last": "1"])
        #expect(x.state.tags == ["seen-x"])
    }

    @Test func businessHoursAcrossTheTimeZone() throws {
        let rules = """
        version: 1
        rules:
          - id: closed
            when: {outside: hours}
            then: [reply: "closed"]
          - id: open
            when: {during: hours}
            then: [reply: "open"]
        """
        let bot = """
        schedules:
          hours:
            mon-fri: "09:00-18:00"
            sat: "22:00-02:00"
            except: [2026-12-25]

        """
        func reply(at time: String) throws -> String {
            var d = try Driver(rules, bot: bot, start: time)
            return d.customer("hi").replies.first ?? ""
        }
        #expect(try reply(at: "2026-11-30T08:59:59+08:00") == "closed")      // Monday, Shanghai
        #expect(try reply(at: "2026-11-30T09:00:00+08:00") == "open")
        #expect(try reply(at: "2026-11-30T17:59:00+08:00") == "open")
        #expect(try reply(at: "2026-11-30T18:00:00+08:00") == "closed")
        #expect(try reply(at: "2026-11-30T01:00:00Z") == "open")             // 09:00 in Shanghai
        #expect(try reply(at: "2026-11-29T23:00:00Z") == "closed")           // 07:00 in Shanghai
        #expect(try reply(at: "2026-12-25T10:00:00+08:00") == "closed")      // a Friday, but a holiday
        #expect(try reply(at: "2026-12-05T23:00:00+08:00") == "open")        // Saturday night
        #expect(try reply(at: "2026-12-06T01:30:00+08:00") == "open")        // …past midnight
        #expect(try reply(at: "2026-12-06T02:00:00+08:00") == "closed")
    }

    @Test func tagsChannelLocaleConditions() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: vip
            when: {tags: {all: [vip], none: [muted]}, channel: "web*", locale: "zh-*"}
            then: [reply: "VIP {{customer.name|friend}}"]
          - id: mark
            when: {keywords: [vip]}
            then: [tag: vip]
          - id: other
            then: [untag: vip]
        """)
        d.state.channel = "web-widget"
        d.state.locale = "zh-CN"
        #expect(d.customer("hello").firedRules == ["other"])
        #expect(d.customer("I am vip").state.tags == ["vip"])
        #expect(d.customer("hello").replies == ["VIP friend"])
        d.state.locale = "en"
        #expect(d.customer("hello", name: "Pooja").firedRules == ["other"])
        #expect(d.state.tags == [])
    }

    @Test func keywordsAllNoneAndLists() throws {
        var d = try Driver("""
        version: 1
        lists:
          late: [late, delayed, 延迟]
        rules:
          - id: late-order
            when: {keywords: {all: [order], any: $late, none: [cancel]}}
            then: [reply: "late"]
        fallback: [reply: "?"]
        """)
        #expect(d.customer("my ORDER is delayed").replies == ["late"])
        #expect(d.customer("my order is fine").replies == ["?"])
        #expect(d.customer("cancel my order, it is late").replies == ["?"])
        #expect(d.customer("order 延迟了").replies == ["late"])
    }

    @Test func idleForAndSessionAge() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: welcome-back
            when: {idle_for: 1h}
            then: [reply: "welcome back"]
          - id: old
            when: {session_age: {at_least: 2h}}
            then: [reply: "old session"]
        fallback: [reply: "-"]
        """)
        #expect(d.customer("a").replies == ["-"])
        d.wait(3600)
        #expect(d.customer("b").replies == ["welcome back"])
        d.wait(3600)
        #expect(d.customer("c").replies == ["welcome back"])
        d.wait(60)
        #expect(d.customer("d").replies == ["old session"])
    }

    @Test func closingTheConversationStartsANewSession() throws {
        var d = try Driver(seed)
        for t in ["a", "b", "c", "d"] { d.customer(t) }
        #expect(d.state.owner == .waiting)
        d.state = Engine.closeSession(d.state)
        let x = d.customer("new question")
        #expect(x.firedRules == ["opening"])
        #expect(x.state.customerMessages == 1)
    }

    @Test func catastrophicRegexHitsALimitAndIsReported() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: slow
            when: {regex: '^(a+)+$'}
            then: [reply: "matched"]
        fallback: [reply: "fallback"]
        """)
        var decision: Decision?
        #expect(cpuTime { decision = d.customer(String(repeating: "a", count: 5000) + "b") } < .seconds(2))
        let x = try #require(decision)
        #expect(x.replies == ["fallback"])
        #expect(x.events.contains { if case .regexLimit(rule: "slow", _, _) = $0 { true } else { false } })
    }

    @Test func longMessagesAreTruncatedForMatching() throws {
        var d = try Driver("version: 1\nrules:\n  - id: r\n    when: {keywords: [refund]}\n    then: [reply: ok]\nfallback: [reply: no]\n")
        let x = d.customer(String(repeating: "x ", count: 10_000) + "refund")
        #expect(x.replies == ["no"])
        #expect(x.events == [.truncated(bytes: 20_006)])
    }

    @Test func traceExplainsEveryRule() throws {
        var d = try Driver(seed)
        let x = d.customer("I want a refund")
        let verdicts = Dictionary(uniqueKeysWithValues: (x.trace ?? []).map { ($0.rule, $0.verdict) })
        #expect(verdicts["refund"] == .fired)
        #expect(verdicts["wants-human"] == .notMatched("when: no keyword of ['human', 'agent', '人工', '转人工']"))
        #expect(verdicts["threshold"] == .notReached("'refund' fired first"))
        #expect(x.ruleSetVersion == d.ruleSet.version)
    }

    @Test func candidateSelectionMatchesFullEvaluation() throws {
        // The fast path (candidate rules only) must decide exactly like the traced full pass.
        let rs = try Driver(seed).ruleSet
        let texts = ["hello", "refund", "I want a human", "502-2345678-9012345", "chargeback now", "退款", "thanks for the refund", ""]
        for text in texts {
            var fast = ConversationState(conversationID: "c"), full = fast
            for i in 0..<5 {
                let m = Message(id: "m\(i)", conversationID: "c", from: .customer, text: text, at: Date(timeIntervalSince1970: Double(i)))
                let a = Engine.decide(rs, fast, m, now: m.at)
                let b = Engine.decide(rs, full, m, now: m.at, options: .init(trace: true))
                #expect(a.effects == b.effects, "\(text) #\(i)")
                fast = a.state
                full = b.state
            }
        }
    }
}

@Suite("Engine: limits")
struct LimitTests {
    @Test func aDroppedReplyDoesNotStartACooldown() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: waiting
            while_waiting: true
            cooldown: 10m
            then: [reply: "An agent will be with you shortly."]
          - id: human
            when: {keywords: [human]}
            then: [handoff: {reason: asked}]
          - id: echo
            then: [reply: "ok"]
        """, bot: "limits: {loop_guard: {replies: 2, within: 1m}}\n")
        d.customer("a")
        d.customer("b")
        d.customer("human")
        // The third reply within a minute: the loop guard drops it (already waiting: silence).
        let dropped = d.customer("hello?")
        #expect(dropped.replies.isEmpty)
        #expect(dropped.limit == ReplyLimit(kind: .loopGuard(.init(replies: 2, within: 60)), rules: ["waiting"], handedOff: false))
        d.wait(60)
        #expect(d.customer("hello??").replies == ["An agent will be with you shortly."],
                "the customer never saw the first one, so no cooldown holds it back")
    }
}
