import Foundation
import Testing
import UsherDiagnostics
import UsherRules
import UsherTranscripts

/// A small bot for rule-test tests: the seed's opening and threshold, a refund rule, an order
/// number rule that continues, a while-waiting rule, and a schedule.
let ruleTestBotFiles: [String: String] = [
    "t/bot.yaml": """
    bot: t
    name: T
    timezone: Asia/Shanghai
    rules: [rules.yaml]
    schedules:
      business_hours:
        mon-fri: "09:00-18:00"
    session: {idle_reset: 24h}
    limits: {max_bot_replies: 10}

    """,
    "t/rules.yaml": """
    version: 1
    rules:
      - id: wants-human
        priority: 100
        when: {keywords: [human, agent]}
        then: [handoff: {reason: asked-for-human}]
      - id: fields
        priority: 60
        when: {channel: web, locale: "zh-*", keywords: [whoami]}
        then: [reply: "{{customer.name|nobody}} in {{conversation.id}}"]
      - id: hours
        priority: 50
        when: {keywords: [hours], outside: business_hours}
        then: [reply: "We're closed."]
      - id: open-now
        priority: 49
        when: {keywords: [hours]}
        then: [reply: "We're open."]
      - id: order-number
        priority: 20
        continue: true
        cooldown: 10m
        when: {regex: '(?<order>\\b\\d{3}-\\d{7}-\\d{7}\\b)'}
        then:
          - reply: "Thanks, I've noted order {{order}}."
          - tag: has-order
          - set: {order_number: "{{order}}"}
      - id: refund
        priority: 10
        once: true
        when: {keywords: [refund]}
        then:
          - reply: "I can help with refunds. What's your order number?"
          - notify: {text: "refund asked", queue: payments}
      - id: opening
        when: {customer_messages: {at_most: 3}}
        then:
          - reply: {sequence: ["Hi there!", "Thanks for reaching out.", "One moment..."]}
      - id: threshold
        when: {customer_messages: {at_least: 4}}
        then: [handoff: {reason: threshold}]
      - id: waiting
        while_waiting: true
        cooldown: 10m
        when: {customer_messages: {at_least: 1}}
        then: [reply: "An agent will be with you shortly."]

    """,
]

/// The bot above, loaded once.
let ruleTestBot: RuleSet = {
    let result = RuleSetLoader.loadBot(botPath: "t/bot.yaml", files: ruleTestBotFiles)
    guard let ruleSet = result.ruleSet else {
        fatalError("the test bot does not load: \(result.diagnostics.map(\.headline))")
    }
    return ruleSet
}()

/// Parses `yaml` as `t/tests/x.yaml` against the test bot.
func loadRuleTests(_ yaml: String, bot: RuleSet? = ruleTestBot) -> RuleTestLoadResult {
    RuleTestSuite.load(path: "t/tests/x.yaml", text: yaml, bot: bot)
}

/// Parses and runs `yaml`; the file must have no errors.
func runRuleTests(_ yaml: String, filter: String? = nil,
                  sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> [RuleTestResult] {
    let loaded = loadRuleTests(yaml)
    #expect(!loaded.diagnostics.hasErrors, "\(loaded.diagnostics.map(\.headline))", sourceLocation: sourceLocation)
    let suite = try #require(loaded.suite, sourceLocation: sourceLocation)
    return RuleTestRunner.run(suite, ruleSet: ruleTestBot, filter: filter)
}

/// `line:col key: expected …, got …` for every failing step of every result.
func failureLines(_ results: [RuleTestResult]) -> [String] {
    results.flatMap { r in
        r.failures.flatMap { f in
            f.mismatches.map { "\(f.step.location.line):\(f.step.location.column) \($0)" }
        }
    }
}

/// The repository's root, for running the checked-in bots' tests.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
