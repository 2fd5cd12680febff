/// A rough parse of a PCRE2 pattern that PCRE2 has already accepted, for the lints and the
/// literal prefilter. Anything it does not understand makes it give up (`init` returns nil), which
/// means "no prefilter, no warning" — never a wrong answer.
struct PatternSyntax: Sendable {
    /// A shape that can backtrack catastrophically, like `(a+)+`.
    let backtrackingRisk: BacktrackingRisk?
    /// Literals of which every match implies at least one occurs in the text, or nil.
    let requiredLiterals: [String]?

    /// The most literals a prefilter set may have before it is not worth it.
    static let maxLiterals = 64

    init?(_ source: String) {
        var parser = PatternParser(source)
        guard let tree = try? parser.parse() else { return nil }
        backtrackingRisk = tree.backtrackingRisk
        if parser.sawAccept {
            requiredLiterals = nil  // (*ACCEPT) can end a match before any literal
        } else if let literals = tree.required, !literals.contains(where: \.isEmpty) {
            requiredLiterals = literals
        } else {
            requiredLiterals = nil
        }
    }
}

/// A regex shape that can take exponential (or high-polynomial) time on a long message, with what
/// the lint says about it.
public enum BacktrackingRisk: Sendable, Equatable {
    /// `(a+)+`, `(\w+\s?)*`: a repeat inside a repeat.
    case nestedRepeat
    /// `(a|aa)+`, `(\w|\d)+`: repeated alternatives that can match the same text.
    case overlappingAlternatives
    /// `(.*a){12}`: a part with an unbounded repeat, repeated three or more times.
    case repeatedUnboundedPart

    /// What is wrong and how to rewrite it, for the `catastrophic-regex` warning.
    public var advice: String {
        switch self {
        case .nestedRepeat:
            "this regex nests unbounded repeats (like (a+)+), which can take exponential time on long messages; rewrite it without a repeat inside a repeat"
        case .overlappingAlternatives:
            "this regex repeats alternatives that can match the same text (like (a|aa)+), which can take exponential time on long messages; make the alternatives start differently, or merge them (a+)"
        case .repeatedUnboundedPart:
            "this regex repeats a part with an unbounded repeat several times (like (.*a){12}), which can take time growing with a high power of the message length; make the repeat stop at a character the rest cannot match (like ([^a]*a){12})"
        }
    }
}
