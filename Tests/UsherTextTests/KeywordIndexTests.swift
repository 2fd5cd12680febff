import Testing
import UsherText

@Suite struct KeywordIndexTests {
    static let table: [(keyword: String, message: String, matches: Bool)] = [
        // Whole words in scripts with spaces.
        ("refund", "I want a refund please", true),
        ("refund", "REFUND!!!", true),
        ("refund", "ＲＥＦＵＮＤ", true),
        ("refund", "refunded already", false),
        ("refund", "nonrefundable", false),
        ("refund", "refund_policy", false),
        ("refund", "refund2", false),
        ("refund", "(refund)", true),
        ("refund", "re\u{00AD}fund", true),
        ("refund", "re\u{200B}fund now", true),
        ("human", "humans", false),
        ("human", "a human, please", true),
        ("c++", "I code c++11", true),                    // ends in punctuation: no boundary there
        ("c++", "abc++", false),
        ("order #", "order # 12", true),
        // Phrases across any run of white space.
        ("money back", "MONEY   back!!", true),
        ("money back", "money\n\tback", true),
        ("money back", "money\u{00A0}back", true),
        ("money back", "moneyback", false),
        ("real person", "a real  person please", true),
        ("real person", "surreal person", false),
        ("  money   back ", "give my money back", true),  // the keyword is normalised too
        // Substrings for Chinese, Japanese, Thai.
        ("转人工", "我要转人工谢谢", true),
        ("人工", "我要转人工谢谢", true),
        ("退款", "申请退款123", true),
        ("退款", "退款", true),
        ("オペレーター", "オペレーターをお願いします", true),
        ("ｵﾍﾟﾚｰﾀｰ", "オペレーターに繋いで", true),      // halfwidth keyword
        ("คืนเงิน", "ขอคืนเงินครับ", true),
        // Mixed: a Latin keyword next to CJK text is at a boundary.
        ("refund", "我要refund谢谢", true),
        ("refund", "我要refunds", false),
        ("iphone", "买iphone15", false),
        // Accents both ways.
        ("cafe", "Café au lait", true),
        ("cafe", "CAFÉ", true),
        ("cafe", "cafe", true),
        ("café", "café", true),
        ("café", "CAFÉ", true),
        ("café", "CAFE\u{0301}", true),
        ("café", "cafe", false),
        ("café", "cafés", false),
        ("naïve", "naive", false),
        ("lodz", "Łódź", true),
        ("Łódź", "lodz", false),
        ("Łódź", "ŁÓDŹ", true),
        ("straße", "STRASSE", true),
        ("strasse", "Straße", true),
        ("οδος", "ΟΔΟΣ", true),
        ("istanbul", "İSTANBUL", true),
        // Empty keywords never match.
        ("", "anything", false),
        ("\u{200B}", "a\u{200B}b", false),
        ("   ", "   ", false),
    ]

    @Test(arguments: table)
    func matches(keyword: String, message: String, matches: Bool) {
        let index = KeywordIndex(keywords: ["unrelated", keyword, "other words"])
        let hits = index.matches(in: NormalizedText(message))
        #expect(hits.contains(1) == matches)
        #expect(hits.ids == (matches ? [1] : []))
    }

    @Test func idsAreSortedUniqueAndCoverOverlaps() {
        let index = KeywordIndex(keywords: ["back", "money back", "money", "Money", "mon", "café", "cafe"])
        let hits = index.matches(in: NormalizedText("Money back at the café, money BACK"))
        #expect(hits.ids == [0, 1, 2, 3, 5, 6])
        #expect(hits.contains(3))
        #expect(!hits.contains(4))
        #expect(hits.contains(5))
        #expect(!hits.contains(99))
        #expect(index.count == 7)
        #expect(index.normalizedKeyword(1) == "money back")
        #expect(index.normalizedKeyword(5) == "café")
        #expect(index.matches(in: NormalizedText("nothing here")).isEmpty)
        #expect(KeywordIndex(keywords: []).matches(in: NormalizedText("x")).isEmpty)
    }

    @Test func aHitThatFailsItsBoundaryDoesNotHideALaterOne() {
        let index = KeywordIndex(keywords: ["refund"])
        #expect(index.matches(in: NormalizedText("refunded, so refund me")).ids == [0])
    }

    /// Ten thousand generated keywords, checked against a brute-force search of every substring.
    @Test func tenThousandKeywordsAgreeWithBruteForce() {
        var generator = SeededGenerator(seed: 42)
        let syllables = ["re", "fu", "nd", "or", "der", "ship", "ca", "fé", "转", "人工", "ta", "ko", "mo", "ney", " "]
        var keywords: [String] = []
        while keywords.count < 10_000 {
            let parts = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                syllables.randomElement(using: &generator)!
            }
            keywords.append(parts.joined())
        }
        let index = KeywordIndex(keywords: keywords)
        let search = BruteForceSearch(keywords: keywords)
        var checked = 0
        var matched = 0
        for _ in 0..<200 {
            let message = (0..<Int.random(in: 5...30, using: &generator)).map { _ in
                syllables.randomElement(using: &generator)!
            }.joined()
            let text = NormalizedText(message)
            let expected = search.matches(in: text)
            #expect(index.matches(in: text).ids == expected, "\(message)")
            checked += 1
            matched += expected.count
        }
        #expect(checked == 200)
        #expect(matched > 1_000)  // the test exercises hits, not just misses
    }
}

/// The documented keyword semantics, spelled out with dictionaries and String operations.
struct BruteForceSearch {
    /// Normalised keyword → ids, for keywords with accents (matched on `exact`) and without.
    var accented: [String: [Int]] = [:]
    var plain: [String: [Int]] = [:]
    var longest = 0

    init(keywords: [String]) {
        for (id, keyword) in keywords.enumerated() {
            let normalized = Normalizer.normalize(keyword)
            if normalized.isEmpty { continue }
            longest = max(longest, normalized.unicodeScalars.count)
            if Normalizer.hasAccent(keyword) {
                accented[normalized, default: []].append(id)
            } else {
                plain[normalized, default: []].append(id)
            }
        }
    }

    func matches(in text: NormalizedText) -> [Int] {
        var found = Set<Int>()
        for (bytes, keywords) in [(text.exact, accented), (text.folded, plain)] {
            let scalars = Array(String(decoding: bytes, as: UTF8.self).unicodeScalars)
            for start in scalars.indices {
                for end in (start + 1)...min(scalars.count, start + longest) {
                    var candidate = ""
                    candidate.unicodeScalars.append(contentsOf: scalars[start..<end])
                    guard let ids = keywords[candidate] else { continue }
                    if Self.continuesWord(scalars[start]) && start > 0 && Self.continuesWord(scalars[start - 1]) { continue }
                    if Self.continuesWord(scalars[end - 1]) && end < scalars.count && Self.continuesWord(scalars[end]) { continue }
                    found.formUnion(ids)
                }
            }
        }
        return found.sorted()
    }

    static func continuesWord(_ scalar: Unicode.Scalar) -> Bool {
        let unspaced = (0x4E00...0x9FFF).contains(scalar.value) || (0x3040...0x30FF).contains(scalar.value)
            || (0x0E00...0x0E7F).contains(scalar.value)
        let word = scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "_"
        return word && !unspaced
    }
}

/// A small deterministic generator (SplitMix64), so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
