/// Which of a bot's languages a customer's message is written in, from the message alone: by
/// script for the languages that have one of their own (Chinese, Japanese, Korean, Thai…), and
/// otherwise by the words that one language's dictionary knows and the others' do not ("quiero
/// un reembolso": "quiero" and "reembolso" are Spanish only). Nil when the message does not
/// tell (an order number, words every language has, as many words of each); a single word
/// tells, but not clearly (`Guess.confident`).
///
/// Only the bot's own languages are candidates, which is what makes short messages work: a
/// general detector (CLD2) answers English for "quiero un reembolso", "hola" and "gracias".
public struct LanguageGuess: Sendable {
    /// The bot's languages, in bot.yaml's order.
    public let languages: [String]
    /// The dictionaries of those written with spaces between words.
    public let dictionaries: [SpellingDictionary]

    public init(languages: [String], dictionaries: [SpellingDictionary]) {
        self.languages = languages
        self.dictionaries = dictionaries
    }

    /// Scripts that name one language each, by the ranges of their letters.
    private static let scripts: [(language: String, ranges: [ClosedRange<UInt32>])] = [
        ("ja", [0x3040...0x309F, 0x30A0...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F]),   // kana
        ("ko", [0x1100...0x11FF, 0x3130...0x318F, 0xAC00...0xD7AF]),                     // Hangul
        ("th", [0x0E00...0x0E7F]),
        ("zh", [0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x2A6DF]), // Han
        ("he", [0x0590...0x05FF]),
        ("el", [0x0370...0x03FF]),
        ("hi", [0x0900...0x097F]),
    ]

    /// What a message says of its language: which, and whether it says so clearly.
    public struct Guess: Sendable, Hashable {
        public var language: String
        /// Told by its script, or by two words or more that only this language's dictionary
        /// knows (more than any other's): "quiero un reembolso". Not by a single word ("ok",
        /// "hola"), which many languages borrow.
        public var confident: Bool

        public init(language: String, confident: Bool) {
            self.language = language
            self.confident = confident
        }
    }

    /// The language of `text` among `languages`, and whether the text tells it clearly; nil
    /// when it does not tell at all.
    public func guess(_ text: NormalizedText) -> Guess? {
        guard languages.count > 1 else { return nil }
        if !text.isASCII, let script = scriptLanguage(text.exact) { return Guess(language: script, confident: true) }
        guard !dictionaries.isEmpty else { return nil }
        var scores = [Int](repeating: 0, count: dictionaries.count)
        var tokens: [WordToken] = []
        text.exact.withUnsafeBufferPointer { bytes in
            WordToken.scan(bytes, into: &tokens)
            for token in tokens where token.isWord {
                let word = Array(bytes[token.start..<token.end])
                let known = dictionaries.map { $0.contains(word) }
                // A word only one language knows is a vote for it; one they all know, none.
                if known.filter({ $0 }).count == 1, let d = known.firstIndex(of: true) { scores[d] += 1 }
            }
        }
        guard let best = scores.max(), best > 0, scores.filter({ $0 == best }).count == 1 else { return nil }
        return Guess(language: dictionaries[scores.firstIndex(of: best)!].language, confident: best >= 2)
    }

    /// The declared language whose script most of the letters are in, when one is.
    private func scriptLanguage(_ bytes: [UInt8]) -> String? {
        var counts: [String: Int] = [:]
        var hasKana = false
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars where scalar.value >= 0x370 {
            guard let script = Self.scripts.first(where: { $0.ranges.contains { $0.contains(scalar.value) } }) else { continue }
            if script.language == "ja" { hasKana = true }
            counts[script.language, default: 0] += 1
        }
        // Japanese writes Han too: with kana about, Han counts for Japanese when the bot has it.
        if hasKana, languages.contains("ja"), let han = counts.removeValue(forKey: "zh") { counts["ja", default: 0] += han }
        let declared = counts.filter { languages.contains($0.key) }
        return declared.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }
}
