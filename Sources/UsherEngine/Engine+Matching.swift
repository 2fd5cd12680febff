public import UsherRules

extension Engine {
    /// The ids of the rules that could match `text` by its keywords and regex literals, in
    /// evaluation order, plus those without text conditions: the matching step of `decide`,
    /// exposed for benchmarks and tools.
    public static func candidateRules(_ ruleSet: RuleSet, text: String, maxMessageBytes: Int = 16_384) -> [Int] {
        var m = MessageMatcher(ruleSet: ruleSet, text: text, maxBytes: maxMessageBytes)
        return m.candidateRules()
    }
}
