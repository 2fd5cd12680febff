/// The keywords that match word by word rather than as written: by their words' forms
/// (Snowball stems, one stemmer per language of the bot) and, later in the pipeline, by typos.
/// `KeywordIndex` owns one when some keyword asks for it; its exact automata still find every
/// keyword as written.
///
/// A keyword takes part when it is words of letters separated by single spaces ("refund",
/// "money back"); anything else (digits, punctuation, Chinese) matches only as written. A
/// message matches when consecutive words of it, one space apart, have the keyword's words'
/// stems in some language of the bot. Stems are compared as normalised: a keyword without
/// accents against the message's accent-folded words, a keyword with an accent against its
/// words as written — as exact matching does.
///
/// The work per message: one pass to cut the text into words, a bit test per word
/// (`PrefixFilter`), and the stemmer only for the words that pass.
final class WordIndex: Sendable {
    /// One keyword, for one language: what each of its words must stem to.
    struct Phrase: Sendable {
        let keyword: Int
        /// Matched against the exact text (the keyword has an accent) rather than the folded.
        let accented: Bool
        /// Each word's stem.
        let stems: [[UInt8]]
    }

    private let stemmers: [Stemmer]
    /// Per language: its phrases, and the stem of each phrase's first word → phrase numbers.
    private let phrases: [[Phrase]]
    private let byFirstStem: [[[UInt8]: [Int]]]
    private let prefixes: PrefixFilter
    private let hasAccented: Bool

    /// `keywords[i]` is keyword id `i`'s normalised text with accents kept (`exact`) and folded;
    /// only those whose `matching[i]` contains `.forms` are indexed. Nil when no keyword takes
    /// part or no language has a stemmer.
    init?(keywords: [(exact: [UInt8], folded: [UInt8])], matching: [WordMatching], stemmers: [Stemmer]) {
        guard !stemmers.isEmpty else { return nil }
        var phrases = [[Phrase]](repeating: [], count: stemmers.count)
        var byFirstStem = [[[UInt8]: [Int]]](repeating: [:], count: stemmers.count)
        var prefixes = PrefixFilter()
        var hasAccented = false
        for (id, keyword) in keywords.enumerated() where id < matching.count && matching[id].contains(.forms) {
            let accented = keyword.exact != keyword.folded
            let text = accented ? keyword.exact : keyword.folded
            guard let words = Self.words(of: text) else { continue }
            hasAccented = hasAccented || accented
            for (l, stemmer) in stemmers.enumerated() {
                let stems = words.map { word in word.withUnsafeBufferPointer { stemmer.stem($0) } }
                prefixes.insert(stem: stems[0])
                byFirstStem[l][stems[0], default: []].append(phrases[l].count)
                phrases[l].append(Phrase(keyword: id, accented: accented, stems: stems))
            }
        }
        guard phrases.contains(where: { !$0.isEmpty }) else { return nil }
        self.stemmers = stemmers
        self.phrases = phrases
        self.byFirstStem = byFirstStem
        self.prefixes = prefixes
        self.hasAccented = hasAccented
    }

    /// The words of a keyword that can match word by word: letters only, one space apart, no
    /// other character. Nil for any other keyword.
    static func words(of keyword: [UInt8]) -> [[UInt8]]? {
        let tokens = WordToken.scan(keyword)
        guard !tokens.isEmpty, tokens[0].start == 0, tokens[tokens.count - 1].end == keyword.count else { return nil }
        for (i, t) in tokens.enumerated() {
            guard t.isWord else { return nil }
            if i > 0 && !(tokens[i - 1].end + 1 == t.start && keyword[t.start - 1] == 0x20) { return nil }
        }
        return tokens.map { Array(keyword[$0.start..<$0.end]) }
    }

    /// Adds the ids of the keywords this message matches by form to `found` (repeats allowed).
    func collect(in text: NormalizedText, into found: inout [Int]) {
        forEachMatch(in: text) { keyword, _ in
            found.append(keyword)
            return true
        }
    }

    /// How keyword `id` matches the message by form, if it does: the message's words.
    func evidence(for id: Int, in text: NormalizedText) -> KeywordEvidence? {
        var result: KeywordEvidence?
        forEachMatch(in: text) { keyword, words in
            guard keyword == id else { return true }
            result = .form(words())
            return false
        }
        return result
    }

    /// Calls `body(keyword, the message's words)` for every match until it returns false. The
    /// folded text is read for keywords without accents; for a message with non-ASCII text, the
    /// exact text too for keywords with them (in pure ASCII the two are the same bytes).
    private func forEachMatch(in text: NormalizedText, _ body: (Int, () -> String) -> Bool) {
        let ascii = text.isASCII
        let go = text.folded.withUnsafeBufferPointer { bytes in
            scan(bytes, side: ascii ? nil : false, body)
        }
        if go && !ascii && hasAccented {
            _ = text.exact.withUnsafeBufferPointer { bytes in scan(bytes, side: true, body) }
        }
    }

    /// One pass over one form of the text: `side` true for accented keywords only, false for the
    /// others, nil for both. Returns false when `body` asked to stop.
    private func scan(_ bytes: UnsafeBufferPointer<UInt8>, side accented: Bool?,
                      _ body: (Int, () -> String) -> Bool) -> Bool {
        var tokens: [WordToken] = []
        WordToken.scan(bytes, into: &tokens)
        var stems: [[[UInt8]?]] = []   // per language, per token: made when first needed
        func stem(_ l: Int, _ t: Int) -> [UInt8] {
            if stems.isEmpty { stems = Array(repeating: Array(repeating: nil, count: tokens.count), count: stemmers.count) }
            if let s = stems[l][t] { return s }
            let token = tokens[t]
            let s = stemmers[l].stem(UnsafeBufferPointer(rebasing: bytes[token.start..<token.end]))
            stems[l][t] = s
            return s
        }
        for (t, token) in tokens.enumerated() where token.isWord {
            // Accented keywords stem from the text as written, where a non-ASCII word's start
            // need not be its stem's (Snowball drops Spanish accents): those always try.
            let bypass = accented == true && !token.isASCII
            guard bypass || prefixes.mayMatch(bytes, start: token.start, count: token.count) else { continue }
            for l in stemmers.indices {
                guard let candidates = byFirstStem[l][stem(l, t)] else { continue }
                for p in candidates {
                    let phrase = phrases[l][p]
                    if let accented, phrase.accented != accented { continue }
                    let count = phrase.stems.count
                    guard t + count <= tokens.count else { continue }
                    var matched = true
                    var k = 1
                    while matched && k < count {
                        let previous = tokens[t + k - 1], next = tokens[t + k]
                        matched = next.isWord && next.start == previous.end + 1 && bytes[previous.end] == 0x20
                            && stem(l, t + k) == phrase.stems[k]
                        k += 1
                    }
                    guard matched else { continue }
                    let end = tokens[t + count - 1].end
                    let words = { String(decoding: UnsafeBufferPointer(rebasing: bytes[token.start..<end]), as: UTF8.self) }
                    if !body(phrase.keyword, words) { return false }
                }
            }
        }
        return true
    }
}
