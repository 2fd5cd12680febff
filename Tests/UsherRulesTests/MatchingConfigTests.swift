import Testing
import UsherDiagnostics
import UsherRules
import UsherText

/// `language` and `matching` in bot.yaml, `exact` on rules and keywords: what loads and what
/// `usher check` says.
@Suite struct MatchingConfigTests {
    static func bot(_ lines: String) -> String {
        "bot: test\ntimezone: UTC\nrules: [rules.yaml]\n" + lines + "\n"
    }

    @Test func typosReadTheDictionaries() throws {
        let rs = try ruleSet(okRule, bot: Self.bot("language: [en, zh, es]\nmatching: {typos: true}"))
        #expect(rs.bot.dictionaries.map(\.language) == ["en", "es"])
        let off = try ruleSet(okRule, bot: Self.bot("language: [en, es]\nmatching: {word_forms: true}"))
        #expect(off.bot.dictionaries.isEmpty)
    }

    @Test func languagesAndMatchingLoad() throws {
        let rs = try ruleSet(okRule, bot: Self.bot("language: [en, es]\nmatching: {word_forms: true, typos: false}"))
        #expect(rs.bot.languages == ["en", "es"])
        #expect(rs.bot.matching == .forms)
        let single = try ruleSet(okRule, bot: Self.bot("language: en"))
        #expect(single.bot.languages == ["en"])
        #expect(single.bot.matching == .exact)
    }

    /// A bot that says nothing matches exactly, as before the setting existed.
    @Test func defaultIsExact() throws {
        let rs = try ruleSet(okRule, bot: Self.bot(""))
        #expect(rs.bot.languages.isEmpty)
        #expect(rs.bot.matching == .exact)
    }

    static let cases: [(bot: String, expected: [String])] = [
        ("language: english", ["b/bot.yaml:4:11: error: [unknown-language] 'english' is not a language code; did you mean 'en'?; write ISO 639 codes like en, es or zh"]),
        ("language: [en, en-US]", ["b/bot.yaml:4:16: error: [unknown-language] 'en-US' is not a language code; did you mean 'en'?; write ISO 639 codes like en, es or zh"]),
        ("language: [en, es, en]", ["b/bot.yaml:4:20: error: [duplicate-language] language 'en' is listed twice"]),
        ("language: xx", ["b/bot.yaml:4:11: error: [unknown-language] 'xx' is not a language code; write ISO 639 codes like en, es or zh"]),
        ("matching: {word_forms: true}", ["b/bot.yaml:4:11: error: [missing-language] 'matching' needs the language your customers write in; add a line like 'language: en' (or 'language: [en, es]')"]),
        ("language: en\nmatching: {word_form: true}", ["b/bot.yaml:5:12: error: [unknown-key] unknown key 'word_form' in 'matching'; did you mean 'word_forms'?"]),
        ("language: en\nmatching: {typos: yes}", ["b/bot.yaml:5:19: error: [wrong-type] expected true or false for 'typos', found 'yes'; write 'true'"]),
        ("language: [en, kl]\nmatching: {typos: true}", ["b/bot.yaml:5:11: error: [missing-dictionary] typos: true needs a spelling dictionary for every language of the bot, to tell typos from words spelled right: no hunspell dictionary for 'kl' in /usr/share/hunspell; install one (Debian: apt-get install hunspell-kl)"]),
        ("language: zh\nmatching: {typos: true}", ["b/bot.yaml:5:11: warning: [no-typos] typos: true has no effect for zh: typos are told from words with the dictionary of a language written with spaces (en, es…)"]),
        ("language: [en, ko, zh]\nmatching: {word_forms: true}", ["b/bot.yaml:5:11: warning: [no-stemmer] Snowball has no stemmer for 'ko': word_forms cannot match other forms of its words, which match only as written"]),
    ]

    @Test(arguments: cases)
    func diagnoses(_ c: (bot: String, expected: [String])) {
        #expect(headlines(rules: okRule, bot: Self.bot(c.bot)) == c.expected)
    }

    static let formsBot = bot("language: en\nmatching: {word_forms: true}")

    /// Matches a message against the rule set's keywords, returning the rules whose keywords hit.
    static func firing(_ rs: RuleSet, _ message: String) -> [String] {
        let hits = rs.keywords.matches(in: NormalizedText(message))
        return rs.rules.filter { rule in
            guard case let .keywords(any, _, _)? = rule.when else { return false }
            return any.contains(where: hits.contains)
        }.map(\.id)
    }

    @Test func ruleAndKeywordOptOut() throws {
        let rs = try ruleSet("""
        version: 1
        lists:
          pay: [payment, {exact: card}]
        rules:
          - id: forms
            when: {keywords: [refund]}
            then: [reply: "a"]
          - id: exact-rule
            exact: true
            when: {keywords: [order]}
            then: [reply: "b"]
          - id: exact-keyword
            when: {keywords: [{exact: cancel}, ship]}
            then: [reply: "c"]
          - id: listed
            when: {keywords: $pay}
            then: [reply: "d"]
        """, bot: Self.formsBot)
        #expect(Self.firing(rs, "two refunds") == ["forms"])
        #expect(Self.firing(rs, "my orders") == [])
        #expect(Self.firing(rs, "my order") == ["exact-rule"])
        #expect(Self.firing(rs, "cancelled") == [])
        #expect(Self.firing(rs, "shipping") == ["exact-keyword"])
        #expect(Self.firing(rs, "payments") == ["listed"])
        #expect(Self.firing(rs, "cards") == [])
        #expect(Self.firing(rs, "card") == ["listed"])
    }

    /// The same words with and without `exact` are two keywords: each rule keeps its own.
    @Test func sameWordsExactAndNot() throws {
        let rs = try ruleSet("""
        version: 1
        rules:
          - id: exact
            exact: true
            continue: true
            when: {keywords: [refund]}
            then: [reply: "a"]
          - id: forms
            when: {keywords: [refund]}
            then: [reply: "b"]
        """, bot: Self.formsBot)
        #expect(Self.firing(rs, "refunds") == ["forms"])
        #expect(Self.firing(rs, "refund") == ["exact", "forms"])
    }

    @Test func badExactEntries() {
        let rules = """
        version: 1
        rules:
          - id: a
            when: {keywords: [{exct: card}, {exact: [a, b]}]}
            then: [reply: "a"]
          - id: b
            exact: maybe
            when: {keywords: [card]}
            then: [reply: "b"]
        """
        #expect(headlines(rules: rules, bot: Self.formsBot) == [
            "b/rules.yaml:4:24: error: [unknown-key] unknown key 'exct' in an item of 'keywords' (a word, or {exact: WORD}); did you mean 'exact'?",
            "b/rules.yaml:4:23: error: [missing-key] this item needs 'exact'; add a line like '- {exact: card}'",
            "b/rules.yaml:4:45: error: [wrong-type] expected text for 'exact', found a list",
            "b/rules.yaml:7:12: error: [wrong-type] expected true or false for 'exact', found 'maybe'",
        ].sorted())
    }
}
