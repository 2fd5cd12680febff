import Foundation
import Testing
import UsherDiagnostics
@testable import UsherTranscripts

/// A malformed test file and every diagnostic it must produce, in file order.
struct BrokenTestFile: Sendable, CustomTestStringConvertible {
    let label: String
    let yaml: String
    let expected: [String]
    var testDescription: String { label }
}

let brokenTestFiles: [BrokenTestFile] = [
    BrokenTestFile(label: "misspelt expect", yaml: """
    tests:
      - name: t
        conversation:
          - customer: hello
            expcet: {rule: opening}
    """, expected: ["t/tests/x.yaml:5:9: error: [unknown-key] unknown key 'expcet' in a step; did you mean 'expect'?"]),

    BrokenTestFile(label: "unknown key far from any", yaml: """
    tests:
      - name: t
        conversation:
          - customer: hello
            colour: red
    """, expected: ["t/tests/x.yaml:5:9: error: [unknown-key] unknown key 'colour' in a step; the keys of a step are: customer, agent, wait, expect"]),

    BrokenTestFile(label: "customer and agent in one step", yaml: """
    tests:
      - name: t
        conversation:
          - customer: hello
            agent: hi
    """, expected: ["t/tests/x.yaml:5:9: error: [conflicting-step] this step has both 'customer' and 'agent'; a step is one message or one wait, so put each on its own '- ' line"]),

    BrokenTestFile(label: "a step with only expect", yaml: """
    tests:
      - name: t
        conversation:
          - expect: silent
    """, expected: ["t/tests/x.yaml:4:9: error: [empty-step] this step has no message: a step is 'customer: TEXT', 'agent: TEXT', 'wait: DURATION' or the word 'close'; 'expect' belongs in the step of the customer message it checks"]),

    BrokenTestFile(label: "an empty step", yaml: """
    tests:
      - name: t
        conversation:
          - {}
    """, expected: ["t/tests/x.yaml:4:9: error: [empty-step] this step has no message: a step is 'customer: TEXT', 'agent: TEXT', 'wait: DURATION' or the word 'close'"]),

    BrokenTestFile(label: "misspelt customer: one error, not two", yaml: """
    tests:
      - name: t
        conversation:
          - custmer: hello
    """, expected: ["t/tests/x.yaml:4:9: error: [unknown-key] unknown key 'custmer' in a step; did you mean 'customer'?"]),

    BrokenTestFile(label: "a word that is not a step", yaml: """
    tests:
      - name: t
        conversation:
          - clsoe
          - hello
    """, expected: [
        "t/tests/x.yaml:4:9: error: [invalid-step] 'clsoe' is not a step; did you mean 'close'?",
        "t/tests/x.yaml:5:9: error: [invalid-step] 'hello' is not a step; a step is 'customer: TEXT', 'agent: TEXT', 'wait: DURATION' or the word 'close'",
    ]),

    BrokenTestFile(label: "a rule the bot does not have", yaml: """
    tests:
      - name: t
        conversation:
          - customer: hello
            expect: {rule: openning}
          - customer: hello
            expect: {rule: [order-number, greeting]}
          - customer: hello
            expect: {rule: fallback}
    """, expected: [
        "t/tests/x.yaml:5:24: error: [unknown-rule] bot 't' has no rule 'openning'; did you mean 'opening'?",
        "t/tests/x.yaml:7:39: error: [unknown-rule] bot 't' has no rule 'greeting'; its rules are: wants-human, fields, hours, open-now, order-number, refund, opening, threshold, waiting",
        "t/tests/x.yaml:9:24: error: [unknown-rule] bot 't' has no fallback, so 'fallback' never fires",
    ]),

    BrokenTestFile(label: "bad durations", yaml: """
    tests:
      - name: t
        conversation:
          - wait: 25
          - wait: 2 hours
          - wait:
    """, expected: [
        "t/tests/x.yaml:4:15: error: [invalid-duration] '25' is not a duration for 'wait'; write a number and a unit: 30s, 10m, 2h, 1d (or 1h30m)",
        "t/tests/x.yaml:5:15: error: [invalid-duration] '2 hours' is not a duration for 'wait'; write a number and a unit: 30s, 10m, 2h, 1d (or 1h30m)",
        "t/tests/x.yaml:6:14: error: [wrong-type] 'wait' is empty; write a value after the colon (\"\" for an empty text)",
    ]),

    BrokenTestFile(label: "bad start times", yaml: """
    tests:
      - name: a
        start: 30/11/2026 10:00
        conversation: [customer: hi]
      - name: b
        start: 2026-02-30T10:00:00+08:00
        conversation: [customer: hi]
      - name: c
        start: 2026-11-30T10:00:00+25:00
        conversation: [customer: hi]
    """, expected: [
        "t/tests/x.yaml:3:12: error: [invalid-time] '30/11/2026 10:00' is not a time; write it like 2026-11-30T10:00:00+08:00 (an ISO 8601 time; without the offset it is read in the bot's time zone)",
        "t/tests/x.yaml:6:12: error: [invalid-time] '2026-02-30T10:00:00+08:00' is not a real date and time; check the month, day, hour and minute",
        "t/tests/x.yaml:9:12: error: [invalid-time] '+25:00' in '2026-11-30T10:00:00+25:00' is not a UTC offset; write one like +08:00 or Z",
    ]),

    BrokenTestFile(label: "a regex that does not compile, located at the mistake", yaml: """
    tests:
      - name: t
        conversation:
          - customer: hello
            expect: {reply: "/Hi (there/"}
          - customer: hello
            expect:
              system: ['/a/', '/b[/']
    """, expected: [
        "t/tests/x.yaml:5:36: error: [invalid-regex] invalid regular expression: missing closing parenthesis",
        "t/tests/x.yaml:8:31: error: [invalid-regex] invalid regular expression: missing terminating ] for character class",
    ]),

    BrokenTestFile(label: "expect on an agent or a wait step", yaml: """
    tests:
      - name: t
        conversation:
          - agent: hi
            expect: silent
          - wait: 1m
            expect: {rule: opening}
    """, expected: [
        "t/tests/x.yaml:5:9: error: [misplaced-expect] 'expect' checks the bot's answer to a customer message, and the bot never answers an agent's message (it goes silent for the session); put it under a 'customer:' step",
        "t/tests/x.yaml:7:9: error: [misplaced-expect] 'expect' checks the bot's answer to a customer message, and a wait sends no message; put it under a 'customer:' step",
    ]),

    BrokenTestFile(label: "expect that is not an expectation", yaml: """
    tests:
      - name: t
        conversation:
          - customer: a
            expect: silnet
          - customer: b
            expect: nothing
          - customer: c
            expect: {}
          - customer: d
            expect: [rule: opening]
          - customer: e
            expect: {silent: true}
          - customer: f
            expect:
    """, expected: [
        "t/tests/x.yaml:5:17: error: [invalid-expect] 'silnet' is not an expectation; did you mean 'silent'?",
        "t/tests/x.yaml:7:17: error: [invalid-expect] 'nothing' is not an expectation; write 'silent', or what the bot should do, like {rule: opening, reply: \"Hi there!\"}",
        "t/tests/x.yaml:9:17: error: [empty-expect] 'expect' checks nothing; write 'silent', or what the bot should do, like {rule: opening, reply: \"Hi there!\"}",
        "t/tests/x.yaml:11:17: error: [wrong-type] expected 'silent' or a mapping for 'expect', found a list; write 'silent', or what the bot should do, like {rule: opening, reply: \"Hi there!\"}",
        "t/tests/x.yaml:13:18: error: [invalid-expect] 'silent' is a word on its own: write 'expect: silent' (or 'reply: []' to check that there is no reply)",
        "t/tests/x.yaml:15:16: error: [empty-expect] 'expect' is empty; write 'silent', or what the bot should do, like {rule: opening, reply: \"Hi there!\"}",
    ]),

    BrokenTestFile(label: "misspelt expectation keys", yaml: """
    tests:
      - name: t
        conversation:
          - customer: a
            expect: {rules: opening, replies: "Hi there!", handof: true}
    """, expected: [
        "t/tests/x.yaml:5:18: error: [unknown-key] unknown key 'rules' in 'expect'; did you mean 'rule'?",
        "t/tests/x.yaml:5:34: error: [unknown-key] unknown key 'replies' in 'expect'; the keys of 'expect' are: rule, reply, quick_replies, system, handoff, tags, notify, metadata",
        "t/tests/x.yaml:5:56: error: [unknown-key] unknown key 'handof' in 'expect'; did you mean 'handoff'?",
    ]),

    BrokenTestFile(label: "quick replies without a title, or with a key they do not have", yaml: """
    tests:
      - name: t
        conversation:
          - customer: a
            expect: {quick_replies: [{url: "https://shop.example"}, {title: A, link: x}]}
    """, expected: [
        #"t/tests/x.yaml:5:34: error: [missing-key] a quick reply needs 'title'; write {title: Returns, url: "https://…"}"#,
        "t/tests/x.yaml:5:76: error: [unknown-key] unknown key 'link' in a quick reply; the keys of a quick reply are: title, url",
    ]),

    BrokenTestFile(label: "handoffs, tags and metadata the bot never produces", yaml: """
    tests:
      - name: t
        tags: [vip]
        conversation:
          - customer: a
            expect: {handoff: treshold}
          - customer: b
            expect: {handoff: yes}
          - customer: c
            expect: {tags: [has-oder, vip, gold]}
          - customer: d
            expect: {metadata: {order_numbr: "1"}}
    """, expected: [
        "t/tests/x.yaml:6:27: error: [unknown-handoff-reason] bot 't' never hands off with reason 'treshold'; did you mean 'threshold'?",
        "t/tests/x.yaml:8:27: error: [wrong-type] expected true, false or a handoff reason for 'handoff', found 'yes'; write 'true'",
        "t/tests/x.yaml:10:25: error: [unknown-tag] no rule of bot 't' sets tag 'has-oder'; did you mean 'has-order'?",
        "t/tests/x.yaml:10:40: error: [unknown-tag] no rule of bot 't' sets tag 'gold'; the tags it sets are: has-order, vip",
        "t/tests/x.yaml:12:29: error: [unknown-metadata-key] no rule of bot 't' sets metadata 'order_numbr'; did you mean 'order_number'?",
    ]),

    BrokenTestFile(label: "the file's shape", yaml: """
    test:
      - name: t
    """, expected: ["t/tests/x.yaml:1:1: error: [unknown-key] unknown key 'test' in a test file; did you mean 'tests'?"]),

    BrokenTestFile(label: "tests that is not a list", yaml: """
    tests:
      name: t
    """, expected: ["t/tests/x.yaml:2:3: error: [wrong-type] expected a list of tests for 'tests' (each starting with '- name:'), found a mapping"]),

    BrokenTestFile(label: "a test without name or conversation", yaml: """
    tests:
      - start: 2026-11-30T10:00:00+08:00
      - name: empty
        conversation: []
      - nmae: t
        conversation: [customer: hi]
    """, expected: [
        "t/tests/x.yaml:2:5: error: [missing-key] a test needs 'name'; add a line like 'name: refund once per session'",
        "t/tests/x.yaml:2:5: error: [missing-key] a test needs 'conversation', the list of its messages; add a line like 'conversation:' followed by '- customer: \"hello\"'",
        "t/tests/x.yaml:4:19: error: [empty-conversation] 'conversation' has no steps; add messages like '- customer: \"hello\"'",
        "t/tests/x.yaml:5:5: error: [unknown-key] unknown key 'nmae' in a test; did you mean 'name'?",
    ]),

    BrokenTestFile(label: "a customer message with no text", yaml: """
    tests:
      - name: t
        conversation:
          - customer:
          - customer: [a, b]
    """, expected: [
        "t/tests/x.yaml:4:18: error: [wrong-type] 'customer' is empty; write a value after the colon (\"\" for an empty text)",
        "t/tests/x.yaml:5:19: error: [wrong-type] expected text for 'customer', found a list",
    ]),

    BrokenTestFile(label: "YAML errors come from the YAML loader", yaml: """
    tests:
      - name: t
        name: u
        conversation: [customer: hi]
    """, expected: ["t/tests/x.yaml:3:5: error: [duplicate-key] duplicate key 'name' in this mapping"]),
]

@Suite("Rule tests: malformed files")
struct RuleTestParserTests {
    @Test(arguments: brokenTestFiles)
    func diagnostics(_ c: BrokenTestFile) {
        let result = loadRuleTests(c.yaml)
        #expect(result.diagnostics.map(\.headline) == c.expected)
        #expect(result.suite == nil, "a file with errors runs none of its tests")
    }

    @Test func duplicateTestNamesAreAWarningWithANote() throws {
        let result = loadRuleTests("""
        tests:
          - name: same
            conversation: [customer: a]
          - name: same
            conversation: [customer: b]
        """)
        let d = try #require(result.diagnostics.first)
        #expect(result.diagnostics.count == 1)
        #expect(d.headline == "t/tests/x.yaml:4:11: warning: [duplicate-test-name] another test in this file is named 'same'; give each test its own name, so failures and --filter can tell them apart")
        #expect(d.notes.map(\.message) == ["the first one is here"])
        #expect(d.notes.first?.location?.description == "t/tests/x.yaml:2:11")
        #expect(result.suite?.tests.count == 2, "a warning does not stop the file from running")
    }

    @Test func aFileWithErrorsStillCountsItsTests() {
        let result = loadRuleTests("""
        tests:
          - name: a
            conversation: [customer: hi]
          - name: b
            conversation: [{customer: hi, expect: {rule: nope}}]
        """)
        #expect(result.suite == nil)
        #expect(result.testCount == 2)
    }

    @Test func withoutABotOnlyTheShapeIsChecked() {
        let yaml = """
        tests:
          - name: a
            start: 2026-11-30T10:00:00
            conversation: [{customer: hi, expect: {rule: nope, handoff: who-knows, tags: [x]}}]
        """
        #expect(loadRuleTests(yaml, bot: nil).diagnostics.isEmpty)
        #expect(loadRuleTests(yaml).diagnostics.count == 3)
    }

    @Test func aWellFormedFile() throws {
        let result = loadRuleTests("""
        tests:
          - name: everything
            start: 2026-11-30T10:00:00+08:00
            conversation_id: c-7
            channel: web
            locale: zh-CN
            customer_name: Pooja
            tags: [vip]
            conversation:
              - customer: "hello"
                expect: {rule: opening, reply: "Hi there!", system: [], handoff: false, tags: [vip], notify: []}
              - agent: "Hi, I'm Li"
              - wait: 1h30m
              - close
              - customer: refund
                expect: {rule: [refund], reply: ["/refunds/"], handoff: threshold, metadata: {order_number: "/\\\\d+/"}}
              - customer: "?"
                expect: silent
        """)
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics.map(\.headline))")
        let test = try #require(result.suite?.tests.first)
        #expect(test.name == "everything")
        #expect(test.location.description == "t/tests/x.yaml:2:5")
        #expect(test.start == ISO8601DateFormatter().date(from: "2026-11-30T02:00:00Z"))
        #expect((test.conversationID, test.channel, test.locale, test.customerName) == ("c-7", "web", "zh-CN", "Pooja"))
        #expect(test.tags == ["vip"])
        #expect(test.steps.map(\.action) == [.customer("hello"), .agent("Hi, I'm Li"), .wait(5400), .close, .customer("refund"), .customer("?")])
        #expect(test.steps.map(\.location.line) == [10, 12, 13, 14, 15, 17])
        let first = try #require(test.steps[0].expectation)
        #expect(first.rules == ["opening"])
        #expect(first.handoff == .notHandedOff)
        #expect(first.tags == ["vip"])
        let fifth = try #require(test.steps[4].expectation)
        #expect(fifth.handoff == .reason("threshold"))
        #expect(fifth.metadata?.first?.key == "order_number")
        #expect(fifth.metadata?.first?.value.isPattern == true)
        #expect(test.steps[5].expectation?.silent == true)
        #expect(result.suite?.expectedRuleIDs == ["opening", "refund"])
    }
}

@Suite("Rule tests: start times")
struct RuleTestTimeTests {
    static let shanghai: Calendar = {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "Asia/Shanghai")!
        return c
    }()
    static let madrid: Calendar = {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "Europe/Madrid")!
        return c
    }()

    @Test(arguments: [
        ("2026-11-30T10:00:00+08:00", "2026-11-30T02:00:00Z"),
        ("2026-11-30T02:00:00Z", "2026-11-30T02:00:00Z"),
        ("2026-11-30t02:00:00z", "2026-11-30T02:00:00Z"),
        ("2026-11-30 10:00:00+0800", "2026-11-30T02:00:00Z"),
        ("2026-11-30T10:00+08", "2026-11-30T02:00:00Z"),
        ("2026-11-29T20:30:00-05:00", "2026-11-30T01:30:00Z"),
        ("2026-11-30T10:00:00", "2026-11-30T02:00:00Z"),     // no offset: the bot's time zone
        ("2026-11-30T10:00", "2026-11-30T02:00:00Z"),
        ("2026-11-30", "2026-11-29T16:00:00Z"),              // midnight in Shanghai
        ("2028-02-29T00:00:00Z", "2028-02-29T00:00:00Z"),
    ])
    func parses(_ text: String, _ utc: String) throws {
        let date = try RuleTestTime.parse(text, in: Self.shanghai).get()
        #expect(date == ISO8601DateFormatter().date(from: utc))
    }

    @Test func aTimeSkippedByDaylightSavingIsAnError() {
        guard case let .failure(problem) = RuleTestTime.parse("2026-03-29T02:30:00", in: Self.madrid) else {
            Issue.record("expected an error")
            return
        }
        #expect(problem.message == "'2026-03-29T02:30:00' does not exist in Europe/Madrid: the clocks skip it (daylight saving time)")
        #expect((try? RuleTestTime.parse("2026-03-29T02:30:00+01:00", in: Self.madrid).get()) != nil)
    }

    @Test(arguments: ["2027-02-29T10:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T10:60:00Z", "2026-11-30T10:00:61Z"])
    func rejectsImpossibleTimes(_ text: String) {
        #expect((try? RuleTestTime.parse(text, in: Self.shanghai).get()) == nil)
    }

    @Test func theDefaultStartIsAMondayMorningInTheBotsTimeZone() {
        let start = RuleTestTime.defaultStart(in: Self.shanghai)
        #expect(start == ISO8601DateFormatter().date(from: "2026-01-05T02:00:00Z"))
        #expect(Self.shanghai.component(.weekday, from: start) == 2)
    }
}
