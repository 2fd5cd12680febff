import Testing
import UsherDiagnostics
import UsherRules

/// `quick_replies` as `usher check` sees them: buttons and links, alone and per language.
@Suite struct QuickReplyConfigTests {
    static let bot = "bot: test\ntimezone: UTC\nrules: [rules.yaml]\nlanguage: [en, es]\n"

    /// The reply of the first rule.
    static func reply(_ rules: String, bot: String? = nil, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Reply {
        let rs = try ruleSet(rules, bot: bot, sourceLocation: sourceLocation)
        guard case let .reply(reply)? = rs.rules.first?.actions.first else {
            Issue.record("not a reply", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return reply
    }

    @Test func buttonsAndLinks() throws {
        let r = try Self.reply("""
        version: 1
        rules:
          - id: a
            then:
              - reply:
                  text: "Anything else?"
                  quick_replies:
                    - Track my order
                    - {title: Returns policy, url: "https://shop.example/returns"}
                    - {title: Talk to a human}
        """)
        #expect(r.form == .text(Template(literal: "Anything else?")))
        #expect(r.quickReplies.map(\.title.source) == ["Track my order", "Returns policy", "Talk to a human"])
        #expect(r.quickReplies.map { $0.url?.source } == [nil, "https://shop.example/returns", nil])
    }

    @Test func everyFormOfTextTakesThem() throws {
        let variants = try Self.reply("""
        version: 1
        rules:
          - id: a
            then: [reply: {text: [Hi, Hello], quick_replies: [Help]}]
        """)
        #expect(variants.form == .variants([Template(literal: "Hi"), Template(literal: "Hello")]))
        #expect(variants.quickReplies.count == 1)
        let sequence = try Self.reply("""
        version: 1
        rules:
          - id: a
            then: [reply: {sequence: [One, Two], quick_replies: Help}]
        """)
        #expect(sequence.form == .sequence([Template(literal: "One"), Template(literal: "Two")]))
        #expect(sequence.quickReplies.map(\.title.source) == ["Help"])
    }

    @Test func perLanguageEachHasItsOwn() throws {
        let r = try Self.reply("""
        version: 1
        rules:
          - id: a
            then:
              - reply:
                  en: {text: "Anything else?", quick_replies: [Track my order]}
                  es: {text: "¿Algo más?", quick_replies: [Seguir mi pedido, {title: Devoluciones, url: "https://shop.example/es/devoluciones"}]}
        """, bot: Self.bot)
        guard case let .languages(replies) = r.form else { Issue.record("not per language"); return }
        #expect(r.quickReplies.isEmpty)
        #expect(replies.map(\.language) == ["en", "es"])
        #expect(replies.map { $0.reply.quickReplies.map(\.title.source) } == [["Track my order"], ["Seguir mi pedido", "Devoluciones"]])
    }

    static let cases: [(rules: String, expected: [String])] = [
        // A link without its scheme: the fix is spelled out.
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [{title: Returns, url: shop.example/returns}]}
        """, ["b/rules.yaml:5:65: error: [invalid-url] a link's address starts with https://; write 'https://shop.example/returns'"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [{title: Go, url: "javascript:alert(1)"}]}
        """, ["b/rules.yaml:5:61: error: [invalid-url] a link opens a web address (https:// or http://), not a 'javascript:' address"]),
        // The column of the space itself.
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [{title: Go, url: "https://shop.example/my returns"}]}
        """, ["b/rules.yaml:5:84: error: [invalid-url] a url cannot contain a space; write it as %20"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [{title: Go, url: "https://{{customer.id}}.example/"}]}
        """, ["b/rules.yaml:5:69: error: [invalid-url] the host of a link is written out, not a template variable; put variables in the path or query, like 'https://shop.example/track/{{order}}'"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [{title: Go, url: "https://shop.example/100%"}]}
        """, ["b/rules.yaml:5:85: error: [invalid-url] '%' starts an escape of two hex digits, like %20; write %25 for a percent sign"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [{url: "https://shop.example/"}]}
        """, ["b/rules.yaml:5:43: error: [missing-key] a quick reply needs 'title'; add a line like 'title: Track my order'"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [{title: Go, link: "https://shop.example/"}]}
        """, ["b/rules.yaml:5:55: error: [unknown-key] unknown key 'link' in a quick reply; expected one of: title, url"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: []}
        """, [#"b/rules.yaml:5:42: error: [wrong-type] 'quick_replies' lists nothing; remove it, or list buttons and links like [Track my order, {title: Returns policy, url: "https://shop.example/returns"}]"#]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [Help, "  "]}
        """, ["b/rules.yaml:5:49: error: [wrong-type] a quick reply's title is empty; write what the button says"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, quick_replies: [Help, Human, Help]}
        """, ["b/rules.yaml:5:56: warning: [duplicate-quick-reply] 'Help' is offered twice in this reply"]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {quick_replies: [Help]}
        """, [#"b/rules.yaml:5:16: error: [missing-key] this reply needs 'text' or 'sequence'; add a line like 'text: "…"'"#]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, sequence: [a, b]}
        """, ["b/rules.yaml:5:37: error: [conflicting-keys] a reply has either 'text' or 'sequence', not both"]),
        // Beside the reply, where the issue's example reads naturally: the fixed line.
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: "Anything else?"
                quick_replies: [Track my order, Talk to a human]
        """, [#"b/rules.yaml:6:9: error: [action-shape] 'quick_replies' belongs inside the reply, not beside it: write 'reply: {text: "Anything else?", quick_replies: [Track my order, Talk to a human]}'"#]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: Hi
              - quick_replies: [Help]
        """, [#"b/rules.yaml:6:9: error: [unknown-action] 'quick_replies' is part of a reply, not an action of its own: write 'reply: {text: "…", quick_replies: […]}'"#]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {en: Hi, es: Hola, quick_replies: [Help]}
        """, [#"b/rules.yaml:5:35: error: [unknown-language] quick replies are given per language, inside each language's reply: 'en: {text: "…", quick_replies: […]}'"#]),
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {text: Hi, es: Hola}
        """, [#"b/rules.yaml:5:27: error: [unknown-key] 'es' is a language, and a reply is either per language or 'text'/'sequence': write 'reply: {es: {text: "…"}, …}'"#]),
        // Buttons in one language and none in another: those customers would get none.
        ("""
        version: 1
        rules:
          - id: a
            then:
              - reply: {en: {text: Hi, quick_replies: [Help]}, es: Hola}
        """, ["b/rules.yaml:5:16: warning: [missing-quick-replies] the 'en' reply has quick replies and 'es' has none: its customers get no buttons; add quick_replies to it"]),
    ]

    @Test(arguments: cases)
    func diagnoses(_ c: (rules: String, expected: [String])) {
        #expect(headlines(rules: c.rules, bot: Self.bot) == c.expected)
    }

    @Test(arguments: [
        ("https://shop.example/returns", nil),
        ("HTTP://shop.example", nil),
        ("https://shop.example:8443/track/{{order}}?from=chat#top", nil),
        ("https://shop.example/search?q={{query|all things}}", nil),   // a fallback is encoded, not checked
        ("https://例え.jp/ページ", nil),
        ("https://shop.example/a%2Fb", nil),
        ("www.shop.example", 0),
        ("mailto:help@shop.example", 0),
        ("track my order", 0),
        ("https://", 8),
        ("https:///returns", 8),
        ("https://user@shop.example", 12),
        ("https://shop.example/a\"b", 22),
        ("https://shop_example/", 12),
        ("https://shop.example/%zz", 21),
    ] as [(String, Int?)])
    func urlProblems(_ url: String, _ offset: Int?) {
        #expect(QuickReplyTemplate.problem(inURL: url)?.offset == offset, "\(url): \(QuickReplyTemplate.problem(inURL: url)?.message ?? "fine")")
    }

    /// The address offered for one without its scheme is itself a good one.
    @Test func theSchemeFixOffersAnAddressThatChecks() {
        #expect(QuickReplyTemplate.problem(inURL: "help.example.com/x y")?.message
                == "a link's address starts with https://; write 'https://help.example.com/x%20y'")
        #expect(QuickReplyTemplate.problem(inURL: "help.example.com/a\"b")?.message.hasPrefix("'help.example.com/a\"b' is not a web address") == true)
    }

    @Test func placeholderValuesArePercentEncoded() {
        #expect(QuickReplyTemplate.encodeForURL("A/1 b?c=d&é") == "A%2F1%20b%3Fc%3Dd%26%C3%A9")
        #expect(QuickReplyTemplate.encodeForURL("plain-text_1.2~") == "plain-text_1.2~")
    }
}
