import Testing
import UsherEngine
import UsherRules

/// Notices per language, and the conversation's language remembered from the messages that
/// tell it: "ok" in a Spanish conversation is answered in Spanish.
@Suite struct NoticeLanguageTests {
    static let rules = """
    version: 1
    rules:
      - id: human
        when: {keywords: [human, persona]}
        then: [handoff: {reason: human}]
      - id: refund
        when: {keywords: [refund, reembolso]}
        then:
          - reply: {en: "I can help with refunds.", es: "Puedo ayudarle con el reembolso."}
          - system: {en: "Refunds take five days.", es: "Los reembolsos tardan cinco días."}
      - id: plain
        when: {keywords: [pedido, order]}
        then: [reply: "Order noted."]
    fallback:
      - reply: {en: "Sorry?", es: "¿Perdón?"}
    """
    static let bot = """
    language: [en, es]
    handoff:
      system_message: {en: "Connecting you to a person.", es: "Le paso con una persona."}
    limits:
      loop_guard: {replies: 2, within: 1h, message: {en: "Let me get a person.", es: "Le busco a una persona."}}
    session: {idle_reset: 1h}

    """

    @Test func theHandoffNoticeIsInTheMessagesLanguage() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        let decision = d.customer("quiero hablar con una persona")
        #expect(decision.summary == ["system: Le paso con una persona.", "handoff: human"])
        #expect(decision.language == LanguageChoice(language: "es", reason: .detected))
        var e = try Driver(Self.rules, bot: Self.bot)
        #expect(e.customer("I want a human please").summary == ["system: Connecting you to a person.", "handoff: human"])
    }

    @Test func aSystemActionPerLanguageFollowsTheReply() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        d.state.locale = "es-ES"
        #expect(d.customer("refund").summary == ["reply: Puedo ayudarle con el reembolso.", "system: Los reembolsos tardan cinco días."])
    }

    @Test func theLoopGuardsNoticeIsInTheConversationsLanguage() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        d.customer("quiero un reembolso")
        d.customer("reembolso por favor")
        let third = d.customer("ok")
        #expect(third.limit?.reason == "loop-guard")
        #expect(third.summary == ["system: Le busco a una persona.", "handoff: loop-guard"])
        #expect(third.language == LanguageChoice(language: "es", reason: .conversation))
    }

    /// A message that tells its language is remembered; one that does not ("ok", an order
    /// number) is answered in it; a message in another language changes it.
    @Test func theConversationRemembersItsLanguage() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        #expect(d.state.language == nil)
        d.customer("quiero un reembolso")
        #expect(d.state.language == "es")
        let ok = d.customer("ok")
        #expect(ok.replies == ["¿Perdón?"])
        #expect(ok.language == LanguageChoice(language: "es", reason: .conversation))
        #expect(ok.state.language == "es", "a message that does not tell leaves it")
        d.customer("the order 502-2345678-9012345")   // a reply written once: still remembered
        #expect(d.state.language == "en")
        d.wait(7200)                                  // a new session: the language stays
        let again = d.customer("???")
        #expect(again.replies == ["Sorry?"] && again.language?.reason == .conversation)
    }

    @Test func theLocaleStillComesFirst() throws {
        var d = try Driver(Self.rules, bot: Self.bot)
        d.customer("quiero un reembolso")
        d.state.locale = "en-GB"
        let ok = d.customer("ok")
        #expect(ok.replies == ["Sorry?"] && ok.language == LanguageChoice(language: "en", reason: .locale("en-GB")))
    }

    /// Without a text per language there is nothing to choose: the message's language is not
    /// worked out, and nothing is remembered.
    @Test func aBotWithoutTextsPerLanguageRemembersNothing() throws {
        var d = try Driver("version: 1\nrules:\n  - id: a\n    then: [reply: Hola]\n", bot: "language: [en, es]\n")
        #expect(d.customer("quiero un reembolso").state.language == nil)
    }
}
