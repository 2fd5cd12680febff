/// A node of the parsed pattern.
indirect enum PatternNode: Sendable {
    /// One character from `set`; `literal` when it is a character the prefilter can look for.
    case char(CharSet, literal: Unicode.Scalar?)
    /// A zero-width item with no requirement on the text: anchors, `\b`, negative lookarounds.
    case zeroWidth(PatternNode?)
    /// A positive lookaround: its content occurs in the text, outside the match perhaps.
    case lookaround(PatternNode)
    case group(PatternNode, atomic: Bool)
    case sequence([PatternNode])
    case alternation([PatternNode])
    case repetition(PatternNode, min: Int, max: Int?, possessive: Bool)
    /// Something that matches text we cannot describe: backreferences, recursion, conditionals.
    case unknown(PatternNode?)
}

extension PatternNode {
    // MARK: Catastrophic backtracking

    /// The first shape in this node that can backtrack catastrophically, if any.
    var backtrackingRisk: BacktrackingRisk? {
        switch self {
        case .char:
            return nil
        case .zeroWidth(let inner), .unknown(let inner):
            return inner?.backtrackingRisk
        case .lookaround(let inner), .group(let inner, _):
            return inner.backtrackingRisk
        case .sequence(let items), .alternation(let items):
            return items.lazy.compactMap(\.backtrackingRisk).first
        case .repetition(let inner, let min, let max, let possessive):
            if !possessive && Self.repeats(min: min, max: max) {
                let repeated = inner.backtrackingRepetitions
                if !repeated.isEmpty && (max == nil || repeated.contains(where: \.unbounded))
                    && !inner.isDelimited(against: repeated) {
                    return .nestedRepeat
                }
                // `(a|aa)+`: alternatives that can take the same text, repeated without bound,
                // split a run of it in exponentially many ways.
                if max == nil && inner.hasOverlappingAlternatives { return .overlappingAlternatives }
            }
            // `(.*a){12}`: a fixed count of a part with an unbounded repeat that is not delimited
            // splits the text in about n^count ways.
            if !possessive, let max, max >= Self.polynomialCount {
                let repeated = inner.backtrackingRepetitions
                if repeated.contains(where: \.unbounded) && !inner.isDelimited(against: repeated) { return .repeatedUnboundedPart }
            }
            return inner.backtrackingRisk
        }
    }

    /// From this many iterations on, a bounded repeat of an undelimited unbounded one counts as
    /// catastrophic: n^3 on a 16 KiB message is already trillions of steps.
    static let polynomialCount = 3

    /// True for an alternation (perhaps in groups) where two single-character alternatives share
    /// a character (`(\w|\d)`), or a longer alternative of single characters is made of
    /// characters the single-character ones match (`(a|aa)`, `(ab|a|b)`).
    private var hasOverlappingAlternatives: Bool {
        var body = self
        while case .group(let inner, atomic: false) = body { body = inner }
        guard case .alternation(let branches) = body else { return false }
        var singles: [CharSet] = []
        var longer: [[CharSet]] = []
        for branch in branches {
            guard let chars = branch.fixedChars else { continue }
            if chars.count == 1 {
                if singles.contains(where: { !$0.isDisjoint(with: chars[0]) }) { return true }
                singles.append(chars[0])
            } else if chars.count > 1 {
                longer.append(chars)
            }
        }
        return longer.contains { chars in chars.allSatisfy { c in singles.contains { !$0.isDisjoint(with: c) } } }
    }

    /// The character sets of this node when it is a fixed run of single characters (`abc`,
    /// `a{2}`, `[ab]c`), else nil.
    private var fixedChars: [CharSet]? {
        switch self {
        case .char(let set, _): return [set]
        case .group(let inner, atomic: false): return inner.fixedChars
        case .sequence(let items):
            var out: [CharSet] = []
            for item in items {
                guard let chars = item.fixedChars else { return nil }
                out += chars
            }
            return out
        case .repetition(let inner, let min, let max, _) where max == min && min <= 16:
            guard let chars = inner.fixedChars else { return nil }
            return Array(Array(repeating: chars, count: min).joined())
        default: return nil
        }
    }

    /// A quantifier that can take a variable number of iterations, more than one: not `?`, `{3}`.
    private static func repeats(min: Int, max: Int?) -> Bool {
        guard let max else { return true }
        return max > min && max > 1
    }

    /// The repetitions inside this node that can give back characters: neither possessive nor in
    /// an atomic group or lookaround. `element` is the repeated character's set when it is one.
    private var backtrackingRepetitions: [(element: CharSet?, unbounded: Bool)] {
        switch self {
        case .char, .zeroWidth, .lookaround, .unknown(nil):
            return []
        case .unknown(let inner?):
            return inner.backtrackingRepetitions
        case .group(let inner, let atomic):
            return atomic ? [] : inner.backtrackingRepetitions
        case .sequence(let items), .alternation(let items):
            return items.flatMap(\.backtrackingRepetitions)
        case .repetition(let inner, let min, let max, let possessive):
            if possessive { return [] }
            if Self.repeats(min: min, max: max) { return [(inner.singleChar, max == nil)] }
            return inner.backtrackingRepetitions
        }
    }

    /// The set when this node is exactly one character (perhaps in a group).
    private var singleChar: CharSet? {
        switch self {
        case .char(let set, _): return set
        case .group(let inner, _): return inner.singleChar
        case .sequence(let items) where items.count == 1: return items[0].singleChar
        default: return nil
        }
    }

    /// True when this repeated body starts or ends with a character none of its inner repetitions
    /// can match, like `([a-z]+\.)+`: then text splits into iterations only one way.
    private func isDelimited(against repeated: [(element: CharSet?, unbounded: Bool)]) -> Bool {
        var body = self
        while case .group(let inner, _) = body { body = inner }
        guard case .sequence(let items) = body, items.count > 1 else { return false }
        let sets = repeated.compactMap(\.element)
        guard sets.count == repeated.count else { return false }
        for edge in [items.first!, items.last!] {
            if case .char(let delimiter, _) = edge, sets.allSatisfy({ $0.isDisjoint(with: delimiter) }) {
                return true
            }
        }
        return false
    }

    // MARK: Required literals

    /// The text this node always matches, when it is fixed and made of prefilter-safe characters.
    var exactText: String? {
        switch self {
        case .char(_, let literal):
            return literal.map { String(Character($0)) }
        case .zeroWidth, .lookaround:
            return ""  // consumes nothing: the characters around it are adjacent in the text
        case .group(let inner, _):
            return inner.exactText
        case .sequence(let items):
            var text = ""
            for item in items {
                guard let part = item.exactText else { return nil }
                text += part
            }
            return text
        case .alternation(let branches):
            return branches.count == 1 ? branches[0].exactText : nil
        case .repetition(let inner, let min, let max, _):
            guard max == min, min <= 64, let part = inner.exactText else { return nil }
            return String(repeating: part, count: min)
        case .unknown:
            return nil
        }
    }

    /// Literals of which one occurs in the text whenever this node matches, or nil if unknown.
    var required: [String]? {
        switch self {
        case .char(_, let literal):
            return literal.map { [String(Character($0))] }
        case .zeroWidth, .unknown:
            return nil
        case .lookaround(let inner), .group(let inner, _):
            return inner.required
        case .repetition(let inner, let min, _, _):
            return min >= 1 ? inner.required : nil
        case .alternation(let branches):
            var literals: [String] = []
            for branch in branches {
                guard let branchLiterals = branch.required else { return nil }
                for literal in branchLiterals where !literals.contains(literal) { literals.append(literal) }
            }
            return literals.count <= PatternSyntax.maxLiterals ? literals : nil
        case .sequence(let items):
            var candidates: [[String]] = []
            var run = ""
            func finishRun() {
                if !run.isEmpty { candidates.append([run]) }
                run = ""
            }
            for item in items {
                if case .lookaround = item {
                    // Zero width, so the run goes on; its content is in the text all the same.
                    if let literals = item.required { candidates.append(literals) }
                } else if let text = item.exactText {
                    run += text
                } else if case .repetition(let inner, let min, _, _) = item, min >= 1, let text = inner.exactText {
                    // x{2,}: "xx" follows what came before, and the last x precedes what comes next.
                    run += String(repeating: text, count: Swift.min(min, 64))
                    finishRun()
                    run = text
                } else {
                    finishRun()
                    if let literals = item.required { candidates.append(literals) }
                }
            }
            finishRun()
            return candidates.max { Self.worse($0, than: $1) }
        }
    }

    /// Orders prefilter sets: a longer shortest literal is better, then fewer literals.
    private static func worse(_ a: [String], than b: [String]) -> Bool {
        let shortestA = a.map(\.utf8.count).min() ?? 0
        let shortestB = b.map(\.utf8.count).min() ?? 0
        if shortestA != shortestB { return shortestA < shortestB }
        return a.count > b.count
    }
}
