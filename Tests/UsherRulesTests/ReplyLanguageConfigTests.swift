import Testing
import UsherDiagnostics
import UsherRules

/// `reply: {en: …, es: …}` as `usher check` sees it.
@Suite struct ReplyLanguageConfigTests {
    static let bot = "bot: test\ntimezone: UTC\nrules: [rules.yaml]\nlanguage: [en, es]\n"

    @Test func compiles() throws {
        let rs = try ruleSet("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {en: "Hi", es: ["Hola", "Buenas"]}
        """, bot: Self.bot)
        guard case let .reply(reply)? = rs.rules.first?.actions.first, case let .languages(replies) = reply.form else {
            Issue.record("not a reply per language")
            return
        }
        #expect(replies.map(\.language) == ["en", "es"])
        #expect(replies[1].reply.texts.count == 2)
    }

    static let cases: [(rules: String, expected: [String])] = [
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {en: "Hi", fr: "Salut", es: "Hola"}
        """, ["b/rules.yaml:5:27: warning: [undeclared-language] a reply in 'fr', which is not a language of the bot (bot.yaml declares en, es): it answers only conversations whose locale is fr"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {en: "Hi"}
        """, ["b/rules.yaml:5:16: warning: [missing-language] no text in 'es', a language of the bot: its customers get the 'en' text; add 'es: \"…\"'"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {en: "Hi", english: "Hello"}
        """, ["b/rules.yaml:5:27: error: [unknown-language] 'english' is not a language code; did you mean 'en'?; a reply per language maps codes like en or es to texts"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {sequense: ["a"]}
        """, [
            #"b/rules.yaml:5:16: error: [missing-key] this reply needs 'text' or 'sequence'; add a line like 'text: "…"'"#,
            "b/rules.yaml:5:17: error: [unknown-key] unknown key 'sequense' in 'reply'; did you mean 'sequence'?",
        ]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {en: "Hi {{nope}}", es: "Hola"}
        """, []),
    ]

    @Test(arguments: cases)
    func diagnoses(_ c: (rules: String, expected: [String])) {
        let got = headlines(rules: c.rules, bot: Self.bot)
        if c.expected.isEmpty {
            #expect(got.contains { $0.contains("nope") })   // templates are checked as everywhere
        } else {
            #expect(got == c.expected)
        }
    }

    @Test func aBotWithoutLanguagesIsToldToDeclareThem() {
        let got = headlines(rules: """
        version: 1
        rules:
          - id: a
            then:
              - reply: {en: "Hi", es: "Hola"}
        """, bot: "bot: test\ntimezone: UTC\nrules: [rules.yaml]\n")
        #expect(got == [
            "b/rules.yaml:5:17: warning: [undeclared-language] a reply in 'en', which is not a language of the bot (bot.yaml declares no language (add 'language: [en, es]')): it answers only conversations whose locale is en",
            "b/rules.yaml:5:27: warning: [undeclared-language] a reply in 'es', which is not a language of the bot (bot.yaml declares no language (add 'language: [en, es]')): it answers only conversations whose locale is es",
        ])
    }
}
