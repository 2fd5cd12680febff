import Testing
import UsherEngine
import UsherRules

/// What a reply's `quick_replies` become in the decision: rendered, in order, in the
/// customer's language, and gone with a reply a limit drops.
@Suite struct QuickReplyTests {
    static let rules = """
    version: 1
    rules:
      - id: order
        when: {regex: '(?<order>\\b[A-Z]{2}-\\d+(/\\d+)?\\b)'}
        then:
          - reply:
              text: "Order {{order}} found."
              quick_replies:
                - Talk to a human
                - {title: "Track {{order}}", url: "https://shop.example/track/{{order}}?name={{customer.name|you}}"}
      - id: help
        when: {keywords: [help, ayuda]}
        then:
          - reply:
              en: {text: "Anything else?", quick_replies: [Track my order, {title: Returns, url: "https://shop.example/returns"}]}
              es: {text: "¿Algo más?", quick_replies: [Seguir mi pedido]}
      - id: plain
        when: {keywords: [hi]}
        then: [reply: "Hello"]
    """

    @Test func titlesAndLinksAreRenderedLinkValuesEncoded() throws {
        var d = try Driver(Self.rules)
        let decision = d.customer("where is AB-12/3 now", name: "Ana María")
        #expect(decision.replies == ["Order AB-12/3 found."])
        #expect(decision.quickReplies == [[
            QuickReply(title: "Talk to a human"),
            QuickReply(title: "Track AB-12/3", url: "https://shop.example/track/AB-12%2F3?name=Ana%20Mar%C3%ADa"),
        ]])
        guard case let .reply(_, rule, items)? = decision.effects.first else { Issue.record("no reply"); return }
        #expect(rule == "order" && items.count == 2)
    }

    @Test func aFallbackValueIsEncodedToo() throws {
        var d = try Driver(Self.rules)
        #expect(d.customer("AB-7").quickReplies.first?.last?.url == "https://shop.example/track/AB-7?name=you")
    }

    @Test func theChosenLanguageBringsItsOwn() throws {
        var d = try Driver(Self.rules, bot: "language: [en, es]\n")
        #expect(d.customer("necesito ayuda por favor").quickReplies == [[QuickReply(title: "Seguir mi pedido")]])
        var e = try Driver(Self.rules, bot: "language: [en, es]\n")
        #expect(e.customer("I need help please").quickReplies
                == [[QuickReply(title: "Track my order"), QuickReply(title: "Returns", url: "https://shop.example/returns")]])
    }

    @Test func aReplyWithoutThemHasNone() throws {
        var d = try Driver(Self.rules)
        #expect(d.customer("hi").quickReplies == [[]])
    }

    @Test func aDroppedReplyTakesItsButtonsWithIt() throws {
        var d = try Driver(Self.rules, bot: "limits: {loop_guard: {replies: 1, within: 1m}}\n")
        #expect(d.customer("help").quickReplies.count == 1)
        let second = d.customer("help")
        #expect(second.quickReplies.isEmpty && second.limit != nil)
    }

    @Test func aTitleRenderedEmptyIsLeftOut() throws {
        let rules = """
        version: 1
        rules:
          - id: refund
            when: {regex: 'refund(?: (?<ref>R\\d+))?'}
            then:
              - reply:
                  text: "About your refund."
                  quick_replies: ["{{ref}}", {title: "{{ref}}", url: "https://shop.example/r/{{ref}}"}, Talk to a human]
        """
        var d = try Driver(rules)
        #expect(d.customer("refund please").quickReplies == [[QuickReply(title: "Talk to a human")]])
        var e = try Driver(rules)
        #expect(e.customer("refund R12").quickReplies
                == [[QuickReply(title: "R12"), QuickReply(title: "R12", url: "https://shop.example/r/R12"), QuickReply(title: "Talk to a human")]])
    }
}
