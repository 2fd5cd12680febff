import Foundation
import Testing
import UsherEngine
import UsherRules
import UsherTranscripts

@Suite("Rule tests: running")
struct RuleTestRunnerTests {
    @Test func theSeedConversationPasses() throws {
        let results = try runRuleTests("""
        tests:
          - name: seed
            start: 2026-11-30T10:00:00+08:00
            conversation:
              - customer: hello
                expect: {rule: opening, reply: "Hi there!", handoff: false, system: [], tags: []}
              - customer: are you there
                expect: {rule: opening, reply: "Thanks for reaching out."}
              - customer: "???"
                expect: {rule: opening, reply: [/^One moment/]}
              - customer: still nothing
                expect: {rule: threshold, handoff: threshold, reply: [],
                         system: "Thanks for your question! We're connecting you to a support agent now."}
              - customer: hello?
                expect: {rule: waiting, reply: "An agent will be with you shortly."}
              - agent: Hi, I'm Li.
              - customer: my parcel is late
                expect: silent
              - wait: 25h
              - customer: hi again
                expect: {rule: opening, reply: "Hi there!"}
        """)
        #expect(results.count == 1)
        #expect(results[0].passed, "\(failureLines(results))")
    }

    /// A rule test's verdict does not depend on the machine: the decision's time budget never
    /// runs out (here 1ms, against a regex that takes far longer to reach its match limit).
    @Test func theDecisionBudgetNeverRunsOutInATest() throws {
        let loaded = RuleSetLoader.loadBot(botPath: "s/bot.yaml", files: [
            "s/bot.yaml": "bot: s\nrules: [rules.yaml]\nlimits: {decision_budget: 1ms}\n",
            "s/rules.yaml": """
            version: 1
            rules:
              - id: slow
                priority: 10
                when: {regex: '^(a|aa)+$'}
                then: [reply: "slow"]
              - id: ends-in-b
                when: {regex: 'ab$'}
                then: [reply: "b at the end"]
            """,
        ])
        let bot = try #require(loaded.ruleSet, "\(loaded.diagnostics.map(\.headline))")
        let text = String(repeating: "a", count: 40) + "b"
        let suite = try #require(loadRuleTests("""
        tests:
          - name: the second regex still runs
            conversation:
              - customer: \(text)
                expect: {rule: ends-in-b, reply: "b at the end"}
        """, bot: bot).suite)
        let results = RuleTestRunner.run(suite, ruleSet: bot)
        #expect(results.map(\.passed) == [true], "\(failureLines(results))")
    }

    @Test func aWrongExpectationFailsWithExpectedAndActual() throws {
        let results = try runRuleTests("""
        tests:
          - name: wrong on purpose
            conversation:
              - customer: I want a refund
                expect: {rule: refund}
              - customer: refund!!
                expect: {rule: refund, reply: "I can help with refunds. What's your order number?"}
              - customer: hello
                expect: silent
              - customer: still there?
                expect: {handoff: asked-for-human, system: "/agent/", tags: [has-order]}
        """)
        let result = try #require(results.first)
        #expect(!result.passed)
        #expect(failureLines(results) == [
            "6:9 rule: expected refund, got opening",
            "6:9 reply: expected \"I can help with refunds. What's your order number?\", got \"Hi there!\"",
            "8:9 silent: expected no reply, system notice or handoff, got reply \"Thanks for reaching out.\"",
            "10:9 handoff: expected handoff asked-for-human, got handoff threshold",
            "10:9 tags: expected [has-order], got no tags",
        ])
        #expect(result.failures.map(\.stepNumber) == [2, 3, 4])
        let second = result.failures[0]
        #expect(second.decision.firedRules == ["opening"])
        #expect(second.decision.trace?.first { $0.rule == "refund" }?.verdict == .blocked("once: already fired in this session"))
        #expect(second.stateBefore.customerMessages == 1)
    }

    @Test func listsMustMatchExactlyAndSingleTextsAnyReply() throws {
        let results = try runRuleTests("""
        tests:
          - name: two replies
            conversation:
              - customer: order 502-2345678-9012345
                expect: {rule: [order-number, opening], reply: "Hi there!", tags: [has-order],
                         metadata: {order_number: 502-2345678-9012345}}
          - name: wrong lists
            conversation:
              - customer: order 502-2345678-9012345
                expect: {rule: [opening, order-number], reply: ["Hi there!"], system: ["/x/"],
                         notify: "refund asked", metadata: {order_number: "/^999/"}}
              - customer: refund
                expect: {rule: [], reply: "/order number\\\\?$/", notify: [refund asked, other]}
        """)
        #expect(results.map(\.passed) == [true, false])
        #expect(failureLines(results) == [
            "9:9 rule: expected [opening, order-number], got [order-number, opening]",
            "9:9 reply: expected exactly [\"Hi there!\"], got [\"Thanks, I've noted order 502-2345678-9012345.\", \"Hi there!\"]",
            "9:9 system: expected exactly [/x/], got no system notice",
            "9:9 notify: expected \"refund asked\", got no notification",
            "9:9 metadata order_number: expected /^999/, got \"502-2345678-9012345\"",
            "12:9 rule: expected no rule, got refund",
            "12:9 notify: expected exactly [\"refund asked\", \"other\"], got [\"refund asked\"]",
        ])
    }

    @Test func quickRepliesAreCheckedLikeReplies() throws {
        let loaded = RuleSetLoader.loadBot(botPath: "q/bot.yaml", files: [
            "q/bot.yaml": "bot: q\nrules: [rules.yaml]\n",
            "q/rules.yaml": """
            version: 1
            rules:
              - id: order
                when: {regex: '(?<order>\\b\\d{3}\\b)'}
                then:
                  - reply:
                      text: "Order {{order}}."
                      quick_replies: [Talk to a human, {title: Track it, url: "https://shop.example/track/{{order}}"}]
              - id: plain
                then: [reply: "Hello"]
            """,
        ])
        let bot = try #require(loaded.ruleSet, "\(loaded.diagnostics.map(\.headline))")
        let suite = try #require(loadRuleTests("""
        tests:
          - name: right
            conversation:
              - customer: order 123
                expect: {quick_replies: [Talk to a human, {title: Track it, url: "https://shop.example/track/123"}]}
              - customer: order 456
                expect: {quick_replies: {title: "/^Track/", url: "/456$/"}}
              - customer: hi
                expect: {quick_replies: []}
          - name: wrong
            conversation:
              - customer: order 123
                expect: {quick_replies: [Talk to a human]}
              - customer: order 456
                expect: {quick_replies: {title: Track it, url: "https://shop.example/track/123"}}
              - customer: hi
                expect: {quick_replies: Talk to a human}
        """, bot: bot).suite)
        let results = RuleTestRunner.run(suite, ruleSet: bot)
        #expect(results.map(\.passed) == [true, false])
        #expect(failureLines(results) == [
            #"12:9 quick_replies: expected exactly ["Talk to a human"], got [Talk to a human] [Track it → https://shop.example/track/123]"#,
            #"14:9 quick_replies: expected "Track it" → "https://shop.example/track/123", got [Talk to a human] [Track it → https://shop.example/track/456]"#,
            #"16:9 quick_replies: expected "Talk to a human", got no quick replies"#,
        ])
    }

    @Test func silenceIsDescribed() throws {
        let results = try runRuleTests("""
        tests:
          - name: after an agent
            conversation:
              - agent: hi
              - customer: I want a refund
                expect: {rule: refund, reply: "/refunds/"}
          - name: no metadata
            conversation:
              - customer: hi
                expect: {metadata: {order_number: "1"}}
        """)
        #expect(failureLines(results) == [
            "5:9 rule: expected refund, got no rule (an agent has taken over the conversation)",
            "5:9 reply: expected /refunds/, got no reply",
            "9:9 metadata order_number: expected \"1\", got not set",
        ])
    }

    @Test func messagesAreOneSecondApartAndWaitsMoveTheClock() throws {
        // order-number has a 10-minute cooldown: the third message comes 9m59s after the first,
        // the fourth exactly 10 minutes after it.
        let results = try runRuleTests("""
        tests:
          - name: clock
            start: 2026-11-30T10:00:00+08:00
            conversation:
              - customer: 502-2345678-9012345
                expect: {rule: [order-number, opening]}
              - wait: 9m57s
              - customer: hours?
                expect: {rule: open-now}
              - customer: 502-2345678-9012345
                expect: {rule: opening}
              - customer: 502-2345678-9012345
                expect: {rule: [order-number, threshold]}
        """)
        #expect(results[0].passed, "\(failureLines(results))")
        let failing = try runRuleTests("""
        tests:
          - name: clock
            start: 2026-11-30T10:00:00+08:00
            conversation:
              - customer: 502-2345678-9012345
              - wait: 9m58s
              - customer: 502-2345678-9012345
                expect: {rule: [order-number, opening]}
        """)
        let failure = try #require(failing.first?.failures.first)
        #expect(failure.time == ISO8601DateFormatter().date(from: "2026-11-30T02:09:59Z"))
    }

    @Test func startTimesAndTheDefault() throws {
        let results = try runRuleTests("""
        tests:
          - name: default start, Monday 10:00 in Shanghai
            conversation: [{customer: hours?, expect: {rule: open-now}}]
          - name: 10:00 UTC is 18:00 in Shanghai
            start: 2026-11-30T10:00:00Z
            conversation: [{customer: hours?, expect: {rule: hours}}]
          - name: 09:59:59 UTC is 17:59:59 in Shanghai
            start: 2026-11-30T09:59:59Z
            conversation: [{customer: hours?, expect: {rule: open-now}}]
          - name: without an offset, the bot's time zone
            start: 2026-11-30T08:59:59
            conversation: [{customer: hours?, expect: {rule: hours}}]
        """)
        #expect(results.allSatisfy { $0.passed }, "\(failureLines(results))")
        #expect(results.count == 4)
    }

    @Test func closeStartsANewSession() throws {
        let results = try runRuleTests("""
        tests:
          - name: close
            conversation:
              - customer: refund
                expect: {rule: refund}
              - customer: agent please
                expect: {rule: wants-human, handoff: true}
              - close
              - customer: refund
                expect: {rule: refund, handoff: false}
        """)
        #expect(results[0].passed, "\(failureLines(results))")
    }

    @Test func conversationFieldsReachTheEngine() throws {
        let results = try runRuleTests("""
        tests:
          - name: fields
            conversation_id: c-9
            channel: web
            locale: zh-CN
            customer_name: Pooja
            tags: [vip]
            conversation:
              - customer: whoami
                expect: {rule: fields, reply: "Pooja in c-9", tags: [vip]}
          - name: defaults
            conversation:
              - customer: whoami
                expect: {rule: opening, tags: []}
        """)
        #expect(results.allSatisfy { $0.passed }, "\(failureLines(results))")
        #expect(RuleTest.defaultConversationID == "test")
    }

    @Test func theFilterIsACaseInsensitiveSubstring() throws {
        let yaml = """
        tests:
          - name: Refund once
            conversation: [customer: refund]
          - name: opening
            conversation: [customer: hi]
          - name: another REFUND test
            conversation: [customer: refund]
        """
        let refund = try runRuleTests(yaml, filter: "refund")
        #expect(refund.map(\.test.name) == ["Refund once", "another REFUND test"])
        #expect(try runRuleTests(yaml, filter: "nothing").isEmpty)
        #expect(try runRuleTests(yaml, filter: nil).count == 3)
    }

    @Test func laterStepsRunAfterAFailure() throws {
        let results = try runRuleTests("""
        tests:
          - name: two failures
            conversation:
              - customer: hi
                expect: {rule: refund}
              - customer: hi
                expect: {rule: opening}
              - customer: hi
                expect: {rule: refund}
        """)
        #expect(results[0].failures.map(\.stepNumber) == [1, 3])
    }
}
