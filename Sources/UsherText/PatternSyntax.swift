/// A rough parse of a PCRE2 pattern that PCRE2 has already accepted, for the lints and the
/// literal prefilter. Anything it does not understand makes it give up (`init` returns nil), which
/// means "no prefilter, no warning" — never a wrong answer.
struct PatternSyntax: Sendable {
    /// A repetition of something that repeats, like `(a+)+`, which can backtrack exponentially.
    let hasNestedQuantifier: Bool
    /// Literals of which every match implies at least one occurs in the text, or nil.
    let requiredLiterals: [String]?

    /// The most literals a prefilter set may have before it is not worth it.
    static let maxLiterals = 64

    init?(_ source: String) {
        var parser = PatternParser(source)
        guard let tree = try? parser.parse() else { return nil }
        hasNestedQuantifier = tree.hasNestedQuantifier
        if parser.sawAccept {
            requiredLiterals = nil  // (*ACCEPT) can end a match before any literal
        } else if let literals = tree.required, !literals.contains(where: \.isEmpty) {
            requiredLiterals = literals
        } else {
            requiredLiterals = nil
        }
    }
}
