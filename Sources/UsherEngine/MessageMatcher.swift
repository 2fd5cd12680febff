import UsherRules
import UsherText

/// Text matching for one message, computed lazily and at most once: the normalised text, the
/// keyword hits of the bot's single keyword index, each regex's result, and from those the rules
/// that can possibly match — so matching does not get slower rule by rule.
struct MessageMatcher {
    let ruleSet: RuleSet
    /// The text regexes run on: the original, cut at the length cap.
    let text: String
    private let maxBytes: Int
    private var hits: KeywordHits?
    private var results: [PatternMatch?]
    private(set) var events: [EngineEvent] = []

    init(ruleSet: RuleSet, text: String, maxBytes: Int) {
        self.ruleSet = ruleSet
        self.maxBytes = maxBytes
        if text.utf8.count > maxBytes {
            var cut = text.utf8.index(text.utf8.startIndex, offsetBy: maxBytes)
            while cut > text.startIndex, !text.unicodeScalars.indices.contains(cut) { cut = text.utf8.index(before: cut) }
            self.text = String(text[..<cut])
            events.append(.truncated(bytes: text.utf8.count))
        } else {
            self.text = text
        }
        results = []
    }

    mutating func keywordHits() -> KeywordHits {
        if let hits { return hits }
        let h = ruleSet.keywords.matches(in: NormalizedText(text, maxBytes: maxBytes))
        hits = h
        return h
    }

    mutating func match(pattern id: Int, rule: String) -> PatternMatch {
        if results.isEmpty { results = Array(repeating: nil, count: ruleSet.patterns.count) }
        if let r = results[id] { return r }
        let r = ruleSet.patterns[id].match(text)
        if case let .limitHit(limit) = r {
            events.append(.regexLimit(rule: rule, pattern: ruleSet.patterns[id].source, limit: limit))
        }
        results[id] = r
        return r
    }

    func limitName(_ id: Int) -> String {
        if let r = results.indices.contains(id) ? results[id] : nil, case let .limitHit(l) = r { return l }
        return "limit"
    }

    /// Indices into `ruleSet.rules`, ascending, of every rule that can match this message.
    mutating func candidateRules() -> [Int] {
        let always = ruleSet.alwaysEvaluated
        var extra: [Int] = []
        if ruleSet.keywords.count > 0 {
            for k in keywordHits().ids { extra += ruleSet.rulesByKeyword[k] }
        }
        if !ruleSet.patterns.isEmpty {
            for p in ruleSet.unfilteredPatterns { extra += ruleSet.rulesByPattern[p] }
            if !ruleSet.literalToPatterns.isEmpty {
                for lit in ruleSet.literals.matches(in: text).ids {
                    for p in ruleSet.literalToPatterns[lit] { extra += ruleSet.rulesByPattern[p] }
                }
            }
        }
        if extra.isEmpty { return always }
        extra.sort()
        // Merge two ascending lists, dropping duplicates.
        var out: [Int] = []
        out.reserveCapacity(always.count + extra.count)
        var i = 0, j = 0
        while i < always.count || j < extra.count {
            let next: Int
            if j == extra.count || (i < always.count && always[i] <= extra[j]) { next = always[i]; i += 1 } else { next = extra[j]; j += 1 }
            if out.last != next { out.append(next) }
        }
        return out
    }
}
