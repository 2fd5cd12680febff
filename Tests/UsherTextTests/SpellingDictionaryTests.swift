import Foundation
import Testing
import UsherText

@Suite struct SpellingDictionaryTests {
    static func spelled(_ d: SpellingDictionary, _ word: String) -> Bool {
        d.contains(NormalizedText(word).exact)
    }

    /// The rules of the file format, on a small dictionary written here.
    @Test func affixRules() {
        let d = SpellingDictionary(language: "xx", dic: """
        5
        refund/SD
        cancel/SU
        hope/D
        only/c
        Madrid
        """, aff: """
        SET UTF-8
        ONLYINCOMPOUND c
        PFX U Y 1
        PFX U 0 un .
        SFX S Y 1
        SFX S 0 s [^s]
        SFX D Y 2
        SFX D 0 ed [^e]
        SFX D 0 d e
        """)
        for word in ["refund", "refunds", "refunded", "cancels", "uncancel", "uncancels", "hoped", "madrid", "MADRID"] {
            #expect(Self.spelled(d, word), "\(word)")
        }
        for word in ["refnd", "hopeed", "unrefund", "only", "cancelsed", "uncancelled", ""] {
            #expect(!Self.spelled(d, word), "\(word)")
        }
    }

    /// A suffix whose rule lets another follow (Spanish -ción, then -es).
    @Test func twoSuffixes() {
        let d = SpellingDictionary(language: "xx", dic: "1\ncancelar/A\n", aff: """
        SET UTF-8
        FLAG UTF-8
        SFX A Y 1
        SFX A r ción/S ar
        SFX S Y 1
        SFX S ón ones ón
        """)
        #expect(Self.spelled(d, "cancelación"))
        #expect(Self.spelled(d, "cancelaciones"))
        #expect(!Self.spelled(d, "cancelares"))
    }

    /// Debian's dictionaries, as bots use them (make deps installs hunspell-en-us and hunspell-es).
    @Test func systemDictionaries() throws {
        let en = try SpellingDictionary.system("en")
        for word in ["refund", "refunds", "refunded", "cancer", "card", "cart", "canceling", "canceled", "parcel", "Tuesday", "unhappy"] {
            #expect(Self.spelled(en, word), "\(word)")
        }
        for word in ["refnd", "cancle", "bagage", "recieved", "replacemnt"] {
            #expect(!Self.spelled(en, word), "\(word)")
        }
        let es = try SpellingDictionary.system("es")
        for word in ["pedidos", "gracias", "quiero", "cancelado", "devoluciones", "cáncer", "reembolso"] {
            #expect(Self.spelled(es, word), "\(word)")
        }
        for word in ["cancer", "reembolzo", "pedidoz"] {
            #expect(!Self.spelled(es, word), "\(word)")
        }
        #expect(try SpellingDictionary.system("en") === en)
    }

    @Test func aMissingDictionarySaysWhatToInstall() {
        #expect(throws: SpellingDictionaryError.self) { try SpellingDictionary.system("kl") }
        #expect(SpellingDictionary.file(for: "en") == "/usr/share/hunspell/en_US.dic")
        #expect(SpellingDictionary.file(for: "es") == "/usr/share/hunspell/es_ES.dic")
        #expect(SpellingDictionary.file(for: "kl") == nil)
    }
}
