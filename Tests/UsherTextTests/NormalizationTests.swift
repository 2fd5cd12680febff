import Testing
@testable import UsherText

@Suite struct NormalizationTests {
    static let table: [(input: String, exact: String, folded: String)] = [
        ("Refund", "refund", "refund"),
        ("ＲＥＦＵＮＤ", "refund", "refund"),                       // fullwidth → NFKC
        ("Straße", "strasse", "strasse"),                          // full case folding
        ("İstanbul", "i\u{307}stanbul", "istanbul"),               // dotted capital I: i + combining dot
        ("ΟΔΟΣ", "οδοσ", "οδοσ"),                                   // capital sigma folds to σ
        ("οδος", "οδοσ", "οδοσ"),                                   // final sigma folds to σ too
        ("re\u{00AD}fund", "refund", "refund"),                    // soft hyphen
        ("re\u{200B}fu\u{200D}nd", "refund", "refund"),            // zero-width space and joiner
        ("\u{200F}refund\u{200E}", "refund", "refund"),            // RLM, LRM
        ("\u{202E}refund\u{202C}\u{2067}x\u{2069}", "refundx", "refundx"), // bidi embeddings, isolates
        ("\u{FEFF}refund", "refund", "refund"),                    // BOM
        ("money\tback\r\n\n now", "money back now", "money back now"),
        ("money\u{00A0}back", "money back", "money back"),         // NBSP
        ("money\u{3000}\u{2003}back", "money back", "money back"), // ideographic and em spaces
        ("  padded  ", "padded", "padded"),
        ("a \u{200B} b", "a b", "a b"),                            // invisible inside a space run
        ("bell\u{07}ring", "bellring", "bellring"),                // control characters dropped
        ("Café", "café", "cafe"),
        ("CAFE\u{0301}", "café", "cafe"),                          // decomposed input composes
        ("naïve Ångström", "naïve ångström", "naive angstrom"),
        ("Łódź", "łódź", "lodz"),                                  // stroke letters fold too
        ("Ærø", "ærø", "æro"),
        ("Tiếng Việt", "tiếng việt", "tieng viet"),
        ("Москва ЁЛКА ЙОД", "москва ёлка йод", "москва елка йод"), // й stays a letter
        ("我要转人工", "我要转人工", "我要转人工"),
        ("ｶﾀｶﾅ", "カタカナ", "カタカナ"),                          // halfwidth katakana
        ("㌀", "アパート", "アパート"),                              // compatibility expansion
        ("ﷺ", "صلى الله عليه وسلم", "صلى الله عليه وسلم"),       // longest expansion
        ("مُحَمَّد", "مُحَمَّد", "محمد"),                          // Arabic harakat fold
        ("สวัสดีครับ", "สวัสดีครับ", "สวัสดีครับ"),                // Thai vowel marks are letters, kept
        ("x\u{00B4}", "x \u{301}", "x"),                           // a spacing accent alone
        ("a ≠ b ↚", "a ≠ b ↚", "a ≠ b ↚"),                         // only letters lose marks
        ("한국어 ﾊﾝｸﾞﾙ", "한국어 ハングル", "한국어 ハングル"), // halfwidth kana and voiced mark compose
        ("", "", ""),
        ("\u{200B}\u{00AD}", "", ""),
    ]

    @Test(arguments: table)
    func normalizes(input: String, exact: String, folded: String) {
        let text = NormalizedText(input)
        #expect(String(decoding: text.exact, as: UTF8.self) == exact)
        #expect(String(decoding: text.folded, as: UTF8.self) == folded)
        #expect(!text.truncated)
        #expect(Normalizer.normalize(input) == exact)
        #expect(Normalizer.foldAccents(exact) == folded)
        #expect(text.isASCII == exact.utf8.allSatisfy { $0 < 0x80 })
    }

    @Test(arguments: [
        ("café", true), ("CAFÉ", true), ("cafe", false), ("Łódź", true), ("转人工", false),
        ("refund", false), ("ＲＥＦＵＮＤ", false), ("straße", false), ("йод", false), ("ёлка", true),
    ])
    func hasAccent(keyword: String, expected: Bool) {
        #expect(Normalizer.hasAccent(keyword) == expected)
    }

    /// The ASCII byte loops must agree with the ICU path on every ASCII input: any bytes (the
    /// general loop), and letters, digits, punctuation and spaces (mostly the eight-byte path).
    @Test func asciiFastPathAgreesWithICU() {
        var generator = SeededGenerator(seed: 7)
        let anyByte: [UInt8] = Array(0..<128)
        let printable: [UInt8] = Array("aZ09 .,!?_-'x YQ".utf8)
        var compared = 0
        for length in 0..<400 {
            let alphabet = length % 2 == 0 ? anyByte : printable
            let bytes = (0..<length / 2).map { _ in alphabet.randomElement(using: &generator)! }
            bytes.withUnsafeBufferPointer { input in
                let fast = NormalizedText.normalizeASCII(input)
                let icu = NormalizedText.normalizeUnicode(input)
                #expect(fast == icu.exact, "\(bytes)")
                #expect(icu.folded == icu.exact)
                compared += 1
            }
        }
        #expect(compared == 400)
    }

    @Test func asciiFoldedSharesStorage() {
        let text = NormalizedText("Hello   WORLD")
        #expect(text.isASCII)
        text.exact.withUnsafeBufferPointer { exact in
            text.folded.withUnsafeBufferPointer { folded in
                #expect(exact.baseAddress == folded.baseAddress)
            }
        }
    }

    @Test func truncatesOnAScalarBoundary() {
        let text = NormalizedText("ab转人工", maxBytes: 4)  // "转" is 3 bytes: cut before it
        #expect(text.truncated)
        #expect(text.exact == Array("ab".utf8))
        let whole = NormalizedText("ab转人工", maxBytes: 11)
        #expect(!whole.truncated)
        #expect(whole.exact == Array("ab转人工".utf8))
        let ascii = NormalizedText(String(repeating: "x", count: 20_000))
        #expect(ascii.truncated)
        #expect(ascii.exact.count == 16_384)
        #expect(NormalizedText("abc", maxBytes: 0).exact.isEmpty)
    }

    @Test func longUnicodeInputGrowsBuffers() {
        let input = String(repeating: "ﷺ", count: 3_000) + String(repeating: "é", count: 3_000)
        let text = NormalizedText(input, maxBytes: .max)
        let expected = String(repeating: "صلى الله عليه وسلم", count: 3_000) + String(repeating: "é", count: 3_000)
        let matches = String(decoding: text.exact, as: UTF8.self) == expected  // keeps a failure short
        #expect(matches)
        #expect(text.folded.count == text.exact.count - 3_000)
    }
}
