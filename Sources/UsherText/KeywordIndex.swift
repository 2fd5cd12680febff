/// One index over every keyword of a bot; keyword ids are positions in `keywords`.
///
/// Keywords are normalised like messages. One Aho-Corasick pass over `NormalizedText.folded`
/// finds the keywords without accents, a second one over `.exact` (only for non-ASCII messages)
/// the keywords with accents, so the cost of a match does not grow with the number of keywords.
/// A hit counts when its boundaries hold: at a keyword end written in a script with spaces
/// between words, the neighbouring character must not be a letter, number, mark or underscore
/// of such a script (CJK and Thai neighbours are fine: "我要refund" contains "refund"); at a
/// keyword end in Han, Hiragana, Katakana, Thai, Lao, Khmer or Myanmar any neighbour is fine,
/// so "转人工" matches inside "我要转人工谢谢". Keywords that normalise to nothing never match.
///
/// Keywords may also match other forms of their words and misspellings (`WordMatching`); a
/// `WordIndex` finds those after the automata.
public final class KeywordIndex: Sendable {
    /// One automaton with what each of its patterns stands for.
    private struct Automaton: Sendable {
        let automaton: AhoCorasick
        /// Pattern number → keyword id.
        let ids: [Int]
        /// Pattern number → which ends need a word boundary.
        let boundaries: [Boundary]

        init(_ keywords: [(id: Int, bytes: [UInt8])]) {
            automaton = AhoCorasick(patterns: keywords.map(\.bytes))
            ids = keywords.map(\.id)
            boundaries = keywords.map { Boundary(keyword: $0.bytes) }
        }

        func collect(in text: [UInt8], into found: inout [Int]) {
            if automaton.isEmpty { return }
            text.withUnsafeBufferPointer { bytes in
                automaton.forEachMatch(in: bytes) { pattern, start, end in
                    let boundary = boundaries[pattern]
                    if boundary.start && start > 0 && ScalarClass.before(start, in: bytes).continuesWord { return }
                    if boundary.end && end < bytes.count && ScalarClass.at(end, in: bytes).continuesWord { return }
                    if found.isEmpty { found.reserveCapacity(8) }
                    found.append(ids[pattern])
                }
            }
        }
    }

    /// Which ends of a keyword must sit on a word boundary.
    private struct Boundary: Sendable {
        var start: Bool
        var end: Bool

        init(keyword: [UInt8]) {
            start = keyword.withUnsafeBufferPointer { ScalarClass.at(0, in: $0).needsBoundary }
            end = keyword.withUnsafeBufferPointer { ScalarClass.before($0.count, in: $0).needsBoundary }
        }
    }

    private let normalized: [String]
    private let plain: Automaton
    private let accented: Automaton
    private let words: WordIndex?

    /// Builds the index; `keywords[i]` gets id `i`. `matching[i]` says how keyword `i` matches
    /// besides as written (missing entries: exactly), with the Snowball stemmers of the bot's
    /// languages for forms and their dictionaries for typos (a word spelled right is no typo).
    public init(keywords: [String], matching: [WordMatching] = [], stemmers: [Stemmer] = [],
                dictionaries: [SpellingDictionary] = []) {
        var plainKeywords: [(id: Int, bytes: [UInt8])] = []
        var accentedKeywords: [(id: Int, bytes: [UInt8])] = []
        var normalized: [String] = []
        var texts: [(exact: [UInt8], folded: [UInt8])] = []
        normalized.reserveCapacity(keywords.count)
        for (id, keyword) in keywords.enumerated() {
            let text = NormalizedText(keyword, maxBytes: .max)
            normalized.append(String(decoding: text.exact, as: UTF8.self))
            if !matching.isEmpty { texts.append((text.exact, text.folded)) }
            if text.exact.isEmpty { continue }
            if text.exact == text.folded {
                plainKeywords.append((id, text.folded))
            } else {
                accentedKeywords.append((id, text.exact))
            }
        }
        self.normalized = normalized
        plain = Automaton(plainKeywords)
        accented = Automaton(accentedKeywords)
        words = matching.contains(where: { !$0.isEmpty })
            ? WordIndex(keywords: texts, matching: matching, stemmers: stemmers, dictionaries: dictionaries) : nil
    }

    /// The number of keywords, empty ones included.
    public var count: Int { normalized.count }

    /// The keyword with this id, normalised (accents kept); empty if it never matches.
    public func normalizedKeyword(_ id: Int) -> String { normalized[id] }

    /// The keywords that occur in `text`.
    public func matches(in text: NormalizedText) -> KeywordHits {
        var found: [Int] = []
        exactMatches(in: text, into: &found)
        words?.collect(in: text, into: &found)
        return KeywordHits(unsorted: found)
    }

    /// How keyword `id` occurs in `text` — as written, as another form, as a typo — or nil when
    /// it does not. For `usher explain`: it scans the message again.
    public func evidence(for id: Int, in text: NormalizedText) -> KeywordEvidence? {
        var found: [Int] = []
        exactMatches(in: text, into: &found)
        if found.contains(id) { return .exact }
        return words?.evidence(for: id, in: text)
    }

    private func exactMatches(in text: NormalizedText, into found: inout [Int]) {
        plain.collect(in: text.folded, into: &found)
        if !text.isASCII { accented.collect(in: text.exact, into: &found) }
    }
}
