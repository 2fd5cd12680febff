import Testing
import UsherEngine
import UsherRules

/// Replies written per language: which text a customer gets, and what the decision says.
@Suite struct ReplyLanguageTests {
    static let rules = """
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund, reembolso]}
        then:
          - reply:
              en: "I can help with refunds."
              es: "Puedo ayudarle con el reembolso."
      - id: greeting
        when: {keywords: [hello, hola]}
        then:
          - reply:
              es: {sequence: ["¡Hola!", "¡Hola otra vez!"]}
              en: {sequence: ["Hi!", "Hi again!"]}
      - id: only-spanish
        when: {keywords: [envio]}
        then:
          - reply: {es: "Sobre su envío…"}
    """
    static let bot = "language: [en, es]\n"

    @Test func theMessageLanguageChooses() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        let spanish = d.customer("quiero un reembolso por favor")
        #expect(spanish.replies == ["Puedo ayudarle con el reembolso."])
        #expect(spanish.language == LanguageChoice(language: "es", reason: .detected))
        var e = try Driver(Self.rules, bot: Self.bot)
        let english = e.customer("I would like a refund please")
        #expect(english.replies == ["I can help with refunds."])
        #expect(english.language == LanguageChoice(language: "en", reason: .detected))
    }

    @Test func theLocaleComesFirst() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        d.state.locale = "es-MX"
        let decision = d.customer("I want a refund")
        #expect(decision.replies == ["Puedo ayudarle con el reembolso."])
        #expect(decision.language == LanguageChoice(language: "es", reason: .locale("es-MX")))
        // A locale the reply has no text for: the message decides.
        var f = try Driver(Self.rules, bot: Self.bot)
        f.state.locale = "fr_FR"
        #expect(f.customer("I want a refund").language == LanguageChoice(language: "en", reason: .detected))
    }

    @Test func aMessageThatDoesNotTellGetsTheBotsFirstLanguage() throws {
        var d = try Driver(Self.rules, bot: "language: [es, en]\n")
        let decision = d.customer("refund 502-2345678-9012345")
        #expect(decision.language == LanguageChoice(language: "en", reason: .detected))
        var e = try Driver(Self.rules, bot: "language: [es, en]\n")
        let unclear = e.customer("hola hello 502-2345678-9012345")   // one word each: a tie
        #expect(unclear.language == LanguageChoice(language: "es", reason: .botLanguage))
        #expect(unclear.replies == ["¡Hola!"])
    }

    @Test func sequencesPerLanguageKeepCounting() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        #expect(d.customer("hello there").replies == ["Hi!"])
        #expect(d.customer("hola, buenas tardes").replies == ["¡Hola otra vez!"])
    }

    /// A single word of another language ("hola amigo": only "hola" is Spanish alone) does not
    /// switch a conversation whose earlier messages were in English; two do.
    @Test func oneWordDoesNotSwitchTheConversation() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        d.customer("hello there")
        let one = d.customer("hola amigo")
        #expect(one.replies == ["Hi again!"] && one.language == LanguageChoice(language: "en", reason: .conversation))
        #expect(one.state.language == "en")
        var e = try Driver(Self.rules, bot: Self.bot)
        let first = e.customer("hola amigo")   // nothing known yet: the one word decides, and is kept
        #expect(first.language == LanguageChoice(language: "es", reason: .detected) && first.state.language == "es")
    }

    @Test func aReplyWithoutTheLanguageUsesWhatItHas() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        let decision = d.customer("what about my envio")
        #expect(decision.replies == ["Sobre su envío…"])
        #expect(decision.language == LanguageChoice(language: "es", reason: .firstListed))
    }

    @Test func noLanguageWithoutAReplyPerLanguage() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: plain
            then: [reply: "hi"]
        """, bot: Self.bot)
        #expect(d.customer("hola").language == nil)
    }

    @Test func scriptsTell() throws {
        var d = try Driver("""
        version: 1
        rules:
          - id: any
            then:
              - reply: {en: "Hello", zh: "您好", ja: "こんにちは"}
        """, bot: "language: [en, zh, ja]\n")
        #expect(d.customer("我要退款").replies == ["您好"])
        #expect(d.customer("返金してください").replies == ["こんにちは"])
        #expect(d.customer("refund please").replies == ["Hello"])
    }
}
