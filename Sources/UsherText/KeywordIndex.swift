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

    /// Builds the index; `keywords[i]` gets id `i`.
    public init(keywords: [String]) {
        var plainKeywords: [(id: Int, bytes: [UInt8])] = []
        var accentedKeywords: [(id: Int, bytes: [UInt8])] = []
        var normalized: [String] = []
        normalized.reserveCapacity(keywords.count)
        for (id, keyword) in keywords.enumerated() {
            let text = NormalizedText(keyword, maxBytes: .max)
            normalized.append(String(decoding: text.exact, as: UTF8.self))
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
    }

    /// The number of keywords, empty ones included.
    public var count: Int { normalized.count }

    /// The keyword with this id, normalised (accents kept); empty if it never matches.
    public func normalizedKeyword(_ id: Int) -> String { normalized[id] }

    /// The keywords that occur in `text`.
    public func matches(in text: NormalizedText) -> KeywordHits {
        var found: [Int] = []
        plain.collect(in: text.folded, into: &found)
        if !text.isASCII { accented.collect(in: text.exact, into: &found) }
        return KeywordHits(unsorted: found)
    }
}
