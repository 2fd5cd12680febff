import Testing
import UsherDiagnostics
import UsherRules

/// Notices per language — bot.yaml's handoff and loop-guard notices, a `system` action, a
/// handoff's `message` — as `usher check` sees them.
@Suite struct NoticeLanguageConfigTests {
    static let bot = """
    bot: test
    timezone: UTC
    rules: [rules.yaml]
    language: [en, es]
    handoff:
      system_message: {en: "Connecting you to a person.", es: "Le paso con una persona."}
    limits:
      loop_guard: {replies: 3, within: 1m, message: {en: "Let me get a person.", es: "Le busco a una persona."}}

    """
    static let rules = """
    version: 1
    rules:
      - id: a
        then:
          - system: {en: "Notice", es: "Aviso"}
          - handoff: {message: {es: "Un momento", en: "One moment"}}
    """

    @Test func compiles() throws {
        let rs = try ruleSet(Self.rules, bot: Self.bot)
        #expect(rs.bot.handoff.systemMessage == .languages([
            LanguageTemplate(language: "en", template: Template(literal: "Connecting you to a person.")),
            LanguageTemplate(language: "es", template: Template(literal: "Le paso con una persona.")),
        ]))
        #expect(rs.bot.loopGuard?.message?.templates.map(\.source) == ["Let me get a person.", "Le busco a una persona."])
        guard case let .system(notice)? = rs.rules.first?.actions.first, case let .handoff(h)? = rs.rules.first?.actions.last else {
            Issue.record("not a system notice and a handoff")
            return
        }
        #expect(notice.templates.map(\.source) == ["Notice", "Aviso"])
        guard case let .languages(texts)? = h.message else { Issue.record("not per language"); return }
        #expect(texts.map(\.language) == ["es", "en"])
        #expect(rs.speaksPerLanguage)
    }

    /// A bot whose only text per language is its handoff notice still tells the customer's
    /// language; one with none does not.
    @Test func speaksPerLanguageWithANoticeAlone() throws {
        let plain = "version: 1\nrules:\n  - id: a\n    then: [reply: Hi]\n"
        #expect(try ruleSet(plain, bot: Self.bot).speaksPerLanguage)
        #expect(try !ruleSet(plain, bot: "bot: test\ntimezone: UTC\nrules: [rules.yaml]\nlanguage: [en, es]\n").speaksPerLanguage)
    }

    static let cases: [(bot: String, rules: String, expected: [String])] = [
        ("handoff:\n  system_message: {en: Bye, fr: Salut}\n", "", [
            "b/bot.yaml:6:19: warning: [missing-language] no text in 'es', a language of the bot: its customers get the 'en' text; add 'es: \"…\"'",
            "b/bot.yaml:6:29: warning: [undeclared-language] a notice in 'fr', which is not a language of the bot (bot.yaml declares en, es): it answers only conversations whose locale is fr",
        ]),
        ("handoff:\n  system_message: {text: Bye}\n", "", [
            "b/bot.yaml:6:19: error: [wrong-type] expected 'system_message' as a text, or a text per language like {en: \"…\", es: \"…\"}, found a mapping",
        ]),
        ("limits:\n  loop_guard: {replies: 3, within: 1m, message: {en: Bye, es: \"Adiós {{order}}\"}}\n", "", [
            "b/bot.yaml:6:72: error: [unknown-template-variable] template variable 'order' can never be set: the loop guard's message has no regex with named groups; name a group in the rule's regex, like (?<order>…)",
        ]),
        ("", "  - id: b\n    then: [system: {en: Hi}]\n", [
            "b/rules.yaml:7:20: warning: [missing-language] no text in 'es', a language of the bot: its customers get the 'en' text; add 'es: \"…\"'",
        ]),
        ("", "  - id: b\n    then: [handoff: {message: {en: Hi, english: Hello}}]\n", [
            "b/rules.yaml:7:40: error: [unknown-language] 'english' is not a language code; did you mean 'en'?; a notice per language maps codes like en or es to texts",
        ]),
        ("", "  - id: b\n    then: [system: {en: Hi, es: {en: Hi}}]\n", [
            "b/rules.yaml:7:33: error: [wrong-type] the notice for 'es' is a text, not another mapping of languages",
        ]),
    ]

    @Test(arguments: cases)
    func diagnoses(_ c: (bot: String, rules: String, expected: [String])) {
        let bot = "bot: test\ntimezone: UTC\nrules: [rules.yaml]\nlanguage: [en, es]\n" + c.bot
        let rules = "version: 1\nrules:\n  - id: a\n    when: {keywords: [hi]}\n    then: [reply: Hi]\n" + c.rules
        #expect(headlines(rules: rules, bot: bot) == c.expected)
    }
}
