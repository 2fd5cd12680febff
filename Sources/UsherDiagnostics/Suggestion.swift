/// "Did you mean …?" — the closest candidate by edit distance, when it is close enough to help.
public enum Suggestion {
    /// The candidate nearest to `word`, or `nil` when none is plausibly a misspelling of it.
    public static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        let w = Array(word.lowercased().unicodeScalars)
        var best: (String, Int)?
        for c in candidates {
            let d = distance(w, Array(c.lowercased().unicodeScalars))
            if best == nil || d < best!.1 { best = (c, d) }
        }
        guard let (candidate, d) = best else { return nil }
        let limit = max(1, min(3, (max(w.count, candidate.unicodeScalars.count) + 2) / 4))
        return d <= limit ? candidate : nil
    }

    /// `; did you mean 'x'?` or the empty string.
    public static func hint(for word: String, in candidates: some Sequence<String>) -> String {
        closest(to: word, in: candidates).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// `; did you mean 'x'?`, or else `; ` and `otherwise` (what the values look like). Not
    /// both: someone who wrote `mon-fir` knows what a range of days looks like, and the
    /// suggestion alone is the fix.
    public static func hint(for word: String, in candidates: some Sequence<String>, otherwise: String) -> String {
        closest(to: word, in: candidates).map { "; did you mean '\($0)'?" } ?? "; " + otherwise
    }

    /// Damerau–Levenshtein (optimal string alignment) distance.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev2 = [Int](repeating: 0, count: b.count + 1)
        var prev = Array(0...b.count)
        var cur = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    cur[j] = min(cur[j], prev2[j - 2] + 1)
                }
            }
            (prev2, prev, cur) = (prev, cur, prev2)
        }
        return prev[b.count]
    }
}
