/// A literal prefilter for many regexes at once: finds which literals occur in the original
/// message text, comparing ASCII letters case-insensitively, so that only the regexes whose
/// required literal occurs need to run. Literal ids are positions in `literals`.
public final class LiteralIndex: Sendable {
    private let automaton: AhoCorasick

    /// Builds the index; `literals[i]` gets id `i`. Empty literals never match.
    public init(literals: [String]) {
        automaton = AhoCorasick(patterns: literals.map { Array($0.utf8) }, asciiCaseInsensitive: true)
    }

    /// The literals that occur in `text`.
    public func matches(in text: String) -> KeywordHits {
        if automaton.isEmpty { return KeywordHits(unsorted: []) }
        var found: [Int] = []
        text.withUTF8Bytes { bytes in
            automaton.forEachMatch(in: bytes) { pattern, _, _ in found.append(pattern) }
        }
        return KeywordHits(unsorted: found)
    }
}
