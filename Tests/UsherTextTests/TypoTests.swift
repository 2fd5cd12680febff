import Testing
import UsherText

@Suite struct TypoTests {
    static let english = try! SpellingDictionary.system("en")

    /// (keyword, message, matches with typos on), against Debian's American English dictionary.
    static let table: [(keyword: String, message: String, matches: Bool)] = [
        ("refund", "I want a refnd", true),             // a letter missing
        ("refund", "I want a refudn", true),            // two swapped
        ("refund", "I want a rfund", true),
        ("agent", "check agen properly", false),       // "again", more likely: four letters are no typo
        ("refund", "I want a refunx", true),            // a letter changed
        ("refund", "I want a reefund", true),           // a letter added
        ("refund", "I want a rfnd", false),             // two edits: too many for 6 letters
        ("cancel", "cancer treatment", false),          // spelled right: a word, not a typo
        ("cancel", "cancle my order", true),
        ("cart", "my card", false),                     // under 5 letters: no typos
        ("cart", "my crat", false),
        ("order", "my ordr", false),                    // four letters: too short to be a typo
        ("order", "my oder", false),
        ("order", "my odrer", true),
        ("order", "my older son", false),               // a word
        ("baggage", "lost bagage", true),
        ("replacement", "a replacemnt", true),          // 11 letters: two edits
        ("replacement", "a replcemnt", true),
        ("replacement", "a rplcemnt", false),
        ("money back", "give my monney back", true),    // a phrase, word by word
        ("money back", "give my monney bak", false),      // "back" has 4 letters: exact or nothing
        ("refund", "refnd2", false),                    // digits: as written only
        ("refund", "我要refnd", true),
    ]

    @Test(arguments: table)
    func typosMatch(_ row: (keyword: String, message: String, matches: Bool)) {
        let index = KeywordIndex(keywords: [row.keyword], matching: [.typos], dictionaries: [Self.english])
        #expect(index.matches(in: NormalizedText(row.message)).contains(0) == row.matches, "\(row.keyword) in \(row.message)")
        let exact = KeywordIndex(keywords: [row.keyword])
        #expect(!exact.matches(in: NormalizedText(row.message)).contains(0) || row.matches)
    }

    /// With forms on too, a word matches by form or by typo, and the typo is counted against the
    /// keyword as written: "thnk" is as much "think" as "thank", so it is no typo of "thanks".
    @Test func formsAndTypos() {
        let stemmers = [Stemmer(language: "en")!]
        let index = KeywordIndex(keywords: ["refunds", "thanks"], matching: [[.forms, .typos], [.forms, .typos]],
                                 stemmers: stemmers, dictionaries: [Self.english])
        #expect(index.evidence(for: 0, in: NormalizedText("a refnds")) == .typo("refnds"))
        #expect(index.evidence(for: 0, in: NormalizedText("a refund")) == .form("refund"))
        #expect(index.evidence(for: 0, in: NormalizedText("refunds!")) == .exact)
        #expect(index.matches(in: NormalizedText("i thnk so")).isEmpty)
        #expect(index.evidence(for: 1, in: NormalizedText("ok thnks")) == .typo("thnks"))
    }

    /// A word spelled right but for its apostrophe is no typo: "arent" is "aren't", not "agent".
    @Test func apostrophesLeftOut() {
        let index = KeywordIndex(keywords: ["agent", "donut"], matching: [.typos, .typos], dictionaries: [Self.english])
        #expect(index.matches(in: NormalizedText("they arent there")).isEmpty)
        #expect(index.matches(in: NormalizedText("i dont know")).isEmpty)
        #expect(index.matches(in: NormalizedText("an agnet please")).ids == [0])
    }

    /// The dictionary decides what is a word: with an empty one, "cancer" is a typo of "cancel".
    @Test func theDictionaryDecides() {
        let none = SpellingDictionary(language: "xx", dic: "0\n", aff: "")
        let index = KeywordIndex(keywords: ["cancel"], matching: [.typos], dictionaries: [none])
        #expect(index.matches(in: NormalizedText("cancer")).ids == [0])
        let english = KeywordIndex(keywords: ["cancel"], matching: [.typos], dictionaries: [Self.english])
        #expect(english.matches(in: NormalizedText("cancer")).ids == [])
    }

    /// A word spelled right in any language of the bot is no typo; the customer's accents count
    /// ("cáncer" is Spanish, "cancer" is English).
    @Test func anyLanguageOfTheBot() throws {
        let spanish = try SpellingDictionary.system("es")
        let index = KeywordIndex(keywords: ["cancel", "pedido"], matching: [.typos, .typos], dictionaries: [spanish])
        #expect(index.matches(in: NormalizedText("tengo cáncer")).ids == [])
        #expect(index.matches(in: NormalizedText("mi pedio")).ids == [1])
        #expect(index.matches(in: NormalizedText("mi pedidos")).ids == [])   // spelled right in Spanish
    }

    @Test func editDistanceCountsASwapAsOne() {
        let index = KeywordIndex(keywords: ["abcdefgh"], matching: [.typos], dictionaries: [])
        #expect(index.matches(in: NormalizedText("bacdefgh")).ids == [0])
        #expect(index.matches(in: NormalizedText("badcefgh")).ids == [])     // two swaps
        let long = KeywordIndex(keywords: ["abcdefghi"], matching: [.typos], dictionaries: [])
        #expect(long.matches(in: NormalizedText("badcefghi")).ids == [0])
        #expect(long.matches(in: NormalizedText("badcfeghi")).ids == [])
    }
}

/// The bit gates in front of the typo look-ups must never turn a typo away: every word one edit
/// (two, for 9 letters and more) from a keyword word, each kind of edit at every position, is
/// found. The dictionary is empty, so nothing counts as spelled right.
@Suite struct TypoGateTests {
    static let none = SpellingDictionary(language: "xx", dic: "0\n", aff: "")
    static let alphabet = Array("aeiouyxz".utf8)

    /// Every string one edit from `word`: deletions, insertions, substitutions, swaps.
    static func oneEdit(_ word: [UInt8]) -> Set<[UInt8]> {
        var out = Set<[UInt8]>()
        for i in 0...word.count {
            for c in alphabet { out.insert(Array(word[..<i]) + [c] + word[i...]) }
            guard i < word.count else { continue }
            out.insert(Array(word[..<i]) + word[(i + 1)...])
            for c in alphabet where c != word[i] { var w = word; w[i] = c; out.insert(w) }
            if i + 1 < word.count { var w = word; w.swapAt(i, i + 1); out.insert(w) }
        }
        out.remove(word)
        return out
    }

    @Test(arguments: ["refund", "cancel", "parcel", "baggage", "shipping", "replacement", "chargeback", "complaints"])
    func everyTypoPasses(_ keyword: String) {
        let word = Array(keyword.utf8)
        let index = KeywordIndex(keywords: [keyword], matching: [.typos], dictionaries: [Self.none])
        var variants = Self.oneEdit(word)
        if word.count >= 9 {
            // Two edits: one at each end is what the gates must see through.
            for first in Self.oneEdit(Array(word.prefix(3))) {
                for last in Self.oneEdit(Array(word.suffix(3))) {
                    variants.insert(first + word.dropFirst(3).dropLast(3) + last)
                }
            }
        }
        var missed: [String] = []
        for v in variants where v.count >= 5 {
            let text = String(decoding: v, as: UTF8.self)
            if !index.matches(in: NormalizedText(text)).contains(0) { missed.append(text) }
        }
        #expect(missed.isEmpty, "\(keyword): \(missed.prefix(10))")
    }
}
