import Foundation
import Testing
import UsherDiagnostics
import UsherRules

/// A broken bot as a support lead might write it, and exactly what `usher check` must say.
struct BrokenCase: CustomTestStringConvertible, Sendable {
    let name: String
    var rules: String
    var bot: String?
    var extraFiles: [String: String] = [:]
    let expected: [String]
    var testDescription: String { name }
}

let bot = """
bot: test
timezone: Asia/Shanghai
rules: [rules.yaml]
schedules:
  business_hours:
    mon-fri: "09:00-18:00"

"""

let okRule = """
version: 1
rules:
  - id: hello
    when: {keywords: [hello]}
    then: [reply: "Hi!"]

"""

let brokenCases: [BrokenCase] = [
    BrokenCase(name: "misspelt rule key", rules: """
    version: 1
    rules:
      - id: refund
        whne: {keywords: [refund]}
        then: [reply: "ok"]
    """, expected: [
        "b/rules.yaml:4:5: error: [unknown-key] unknown key 'whne' in a rule; did you mean 'when'?",
    ]),
]

@Suite("Broken rule files")
struct BrokenRuleFileTests {
    @Test(arguments: brokenCases)
    func diagnoses(_ c: BrokenCase) {
        var files = c.extraFiles
        files["b/bot.yaml"] = c.bot ?? bot
        files["b/rules.yaml"] = c.rules
        let result = RuleSetLoader.loadBot(botPath: "b/bot.yaml", files: files)
        let got = result.diagnostics.sortedForDisplay().map(\.headline)
        #expect(got == c.expected, "\n" + got.map { "        \"\($0)\"," }.joined(separator: "\n"))
        if c.expected.contains(where: { $0.contains(": error: ") }) {
            #expect(result.ruleSet == nil, "a bot with errors must not load")
        }
    }
}
