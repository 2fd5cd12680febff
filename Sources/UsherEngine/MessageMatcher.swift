import UsherRules
import UsherText

/// Text matching for one message, computed lazily and at most once: the normalised text, the
/// keyword hits of the bot's single keyword index, each regex's result, and from those the rules
/// that can possibly match — so matching does not get slower rule by rule.
///
/// Regexes share the decision's time budget: each runs until `deadline` on `clock`, and once one
/// runs out of it (or it is already spent) every regex after it counts as no match unrun.
struct MessageMatcher {
    let ruleSet: RuleSet
    /// The text regexes run on: the original, cut at the length cap.
    let text: String
    private let maxBytes: Int
    private var hits: KeywordHits?
    /// The message as keywords see it, once `keywordHits` has run.
    private var normalized: NormalizedText?
    private var results: [PatternMatch?]
    /// Per pattern, whether its required literals occur in the text (nil until first needed).
    private var passing: [Bool]?
    private(set) var events: [EngineEvent] = []
    /// When the decision's time is up, on `clock`; nil: no budget (candidate selection only).
    private let deadline: Duration?
    private let clock: MonotonicClock
    /// The pattern at which the budget ran out: stopped while it ran, or not started.
    private(set) var stoppedPattern: Int?
    /// The rules whose regexes counted as no match for want of time, in the order tried.
    private(set) var starvedRules: [String] = []
    private var starved: Set<String> = []

    init(ruleSet: RuleSet, text: String, maxBytes: Int, deadline: Duration? = nil, clock: MonotonicClock = .system) {
        self.ruleSet = ruleSet
        self.maxBytes = maxBytes
        self.deadline = deadline
        self.clock = clock
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

    /// Whether the budget ran out: the regexes still to come count as no match.
    var outOfTime: Bool { !starvedRules.isEmpty }

    mutating func keywordHits() -> KeywordHits {
        if let hits { return hits }
        let h = ruleSet.keywords.matches(in: normalizedText())
        hits = h
        return h
    }

    /// How keyword `id` matched this message: as written, as another form, as a typo (traces).
    mutating func evidence(for id: Int) -> KeywordEvidence? {
        guard keywordHits().contains(id), let normalized else { return nil }
        return ruleSet.keywords.evidence(for: id, in: normalized)
    }

    /// The message as keywords see it (normalised once, shared with the keyword match).
    mutating func normalizedText() -> NormalizedText {
        if let normalized { return normalized }
        let text = NormalizedText(text, maxBytes: maxBytes)
        normalized = text
        return text
    }

    mutating func match(pattern id: Int, rule: String) -> PatternMatch {
        if results.isEmpty { results = Array(repeating: nil, count: ruleSet.patterns.count) }
        if let r = results[id] {
            if r == .outOfTime { starve(rule) }
            return r
        }
        // A pattern whose required literal is absent cannot match: it is not run (nor charged).
        guard passesPrefilter(id) else {
            results[id] = .noMatch
            return .noMatch
        }
        let pattern = ruleSet.patterns[id]
        let r: PatternMatch
        if outOfTime {
            r = .outOfTime
        } else if let deadline {
            r = pattern.match(text, deadline: deadline, clock: clock)
        } else {
            r = pattern.match(text)
        }
        switch r {
        case let .limitHit(limit):
            events.append(.regexLimit(rule: rule, pattern: pattern.source, limit: limit))
        case .outOfTime:
            if !outOfTime {
                // Reported once, for the rule where the time ran out: the operator's lead.
                events.append(.regexLimit(rule: rule, pattern: pattern.source, limit: EngineEvent.decisionBudget))
                stoppedPattern = id
            }
            starve(rule)
        case .match, .noMatch:
            break
        }
        results[id] = r
        return r
    }

    private mutating func starve(_ rule: String) {
        if starved.insert(rule).inserted { starvedRules.append(rule) }
    }

    func limitName(_ id: Int) -> String {
        if let r = results.indices.contains(id) ? results[id] : nil, case let .limitHit(l) = r { return l }
        return "limit"
    }

    /// The result a pattern had, if it was run (or skipped) in this decision.
    func result(_ id: Int) -> PatternMatch? { results.indices.contains(id) ? results[id] : nil }

    /// Whether pattern `id` can match: it has no required literals, or one of them occurs.
    private mutating func passesPrefilter(_ id: Int) -> Bool {
        if let passing { return passing[id] }
        var p = [Bool](repeating: false, count: ruleSet.patterns.count)
        for u in ruleSet.unfilteredPatterns { p[u] = true }
        if !ruleSet.literalToPatterns.isEmpty {
            for lit in ruleSet.literals.matches(in: text).ids {
                for q in ruleSet.literalToPatterns[lit] { p[q] = true }
            }
        }
        passing = p
        return p[id]
    }

    /// Indices into `ruleSet.rules`, ascending, of every rule that can match this message.
    mutating func candidateRules() -> [Int] {
        let always = ruleSet.alwaysEvaluated
        var extra: [Int] = []
        if ruleSet.keywords.count > 0 {
            for k in keywordHits().ids { extra += ruleSet.rulesByKeyword[k] }
        }
        if !ruleSet.patterns.isEmpty {
            _ = passesPrefilter(0)
            for (p, passes) in passing!.enumerated() where passes { extra += ruleSet.rulesByPattern[p] }
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
