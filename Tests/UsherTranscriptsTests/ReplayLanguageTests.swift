import Foundation
import Testing
import UsherEngine
import UsherRules
import UsherTranscripts

/// Replay shows the language a reply written per language answered in.
@Suite struct ReplayLanguageTests {
    static let files = [
        "l/bot.yaml": "bot: lang\ntimezone: UTC\nrules: [rules.yaml]\nlanguage: [en, es]\n",
        "l/rules.yaml": """
        version: 1
        rules:
          - id: refund
            when: {keywords: [refund, reembolso]}
            then:
              - reply: {en: "I can help with refunds.", es: "Puedo ayudarle con el reembolso."}
        """,
    ]
    static let transcript = """
    {"conversation":"c-es","id":"1","at":"2026-11-30T02:00:00Z","from":"customer","text":"quiero un reembolso"}
    {"conversation":"c-mx","id":"1","at":"2026-11-30T02:00:05Z","from":"customer","locale":"es-MX","text":"refund please"}
    {"conversation":"c-en","id":"1","at":"2026-11-30T02:00:10Z","from":"customer","text":"I want a refund"}
    {"conversation":"c-es2","id":"1","at":"2026-11-30T02:00:15Z","from":"customer","text":"quiero un reembolso"}
    {"conversation":"c-es2","id":"2","at":"2026-11-30T02:00:20Z","from":"customer","text":"refund?"}

    """

    func render(_ make: (ReportOutput) throws -> any ReplayReportWriter) throws -> String {
        try replayReport(Self.files, botPath: "l", transcript: Self.transcript, make)
    }

    @Test func textSaysWhichLanguage() throws {
        let text = try render { ReportText($0) }
        #expect(text.contains("Puedo ayudarle con el reembolso.  [refund] in es (the language of the message)"))
        #expect(text.contains("Puedo ayudarle con el reembolso.  [refund] in es (the conversation's locale es-MX)"))
        #expect(text.contains("I can help with refunds.  [refund] in en (the language of the message)"))
        // One English word in a Spanish conversation: the conversation's language answers.
        #expect(text.contains("Puedo ayudarle con el reembolso.  [refund] in es (the conversation's language, from an earlier message)"))
    }

    @Test func jsonSaysWhichLanguage() throws {
        let json = try render { ReportJSON($0) }
        #expect(json.contains(#""language": {"code": "es", "reason": "detected"}"#))
        #expect(json.contains(#""language": {"code": "es", "reason": "locale"}"#))
        #expect(json.contains(#""language": {"code": "en", "reason": "detected"}"#))
        #expect(json.contains(#""language": {"code": "es", "reason": "conversation"}"#))
    }
}
