public import UsherDiagnostics

/// Warnings about rules that load but cannot work as written: shadowed rules, thresholds an
/// earlier handoff makes unreachable, sequences longer than the rule can fire. (Duplicate
/// keywords and risky regexes are reported by the compiler, where their locations are known.)
public struct RuleLinter {
    public let ruleSet: RuleSet

    public init(ruleSet: RuleSet) { self.ruleSet = ruleSet }

    public func lint() -> [Diagnostic] {
        var out: [Diagnostic] = []
        let rules = ruleSet.rules
        let handoff = thresholdHandoff()
        // Only rules without a text condition can shadow others: collect them once, so linting
        // stays linear in the number of rules.
        let shadowers = rules.indices.filter { i in
            let e = rules[i]
            return e.isUnguarded && e.unless == nil && (e.when == nil || e.when!.customerMessageRange != nil)
        }
        for (i, rule) in rules.enumerated() where rule.enabled {
            if let e = shadower(of: i, among: shadowers) {
                let why = e.when == nil ? "has no condition" : "matches every message with customer_messages \(e.when!.customerMessageRange!)"
                out.append(.warning("shadowed-rule",
                    "rule '\(rule.id)' can never fire: rule '\(e.id)' comes first (priority \(e.priority)) and \(why), so it always wins; raise this rule's priority or narrow '\(e.id)'",
                    at: rule.location, notes: [.init("'\(e.id)' is here", at: e.location)]))
                continue
            }
            let range = rule.when?.impliedCustomerMessageRange ?? CountRange()
            if let (h, n) = handoff, h.id != rule.id, !rule.whileWaiting, range.lower > n {
                out.append(.warning("unreachable-threshold",
                    "rule '\(rule.id)' needs customer_messages \(range), but rule '\(h.id)' hands off at customer message \(n), after which the bot is silent until a new session",
                    at: rule.location, notes: [.init("the handoff is here", at: h.location)]))
                continue
            }
            for action in rule.actions {
                guard case let .reply(reply) = action, case let .sequence(texts) = reply.form else { continue }
                var upper = range.upper
                if let (h, n) = handoff, h.id != rule.id, !rule.whileWaiting { upper = min(upper ?? n - 1, n - 1) }
                let maxFires = rule.once ? 1 : upper.map { max(0, $0 - max(range.lower, 1) + 1) }
                if let maxFires, texts.count > maxFires {
                    let why = rule.once ? "it is 'once'" : "customer_messages is at most \(upper!)"
                    out.append(.warning("sequence-too-long",
                        "this sequence has \(texts.count) texts but rule '\(rule.id)' can fire at most \(maxFires) time\(maxFires == 1 ? "" : "s") per session (\(why)); the texts after the \(ordinal(maxFires)) are never sent",
                        at: rule.location))
                }
            }
        }
        return out
    }

    /// An earlier rule that always wins over rule `i`.
    private func shadower(of i: Int, among candidates: [Int]) -> Rule? {
        let rule = ruleSet.rules[i]
        let range = rule.when?.impliedCustomerMessageRange ?? CountRange()
        for j in candidates {
            guard j < i else { break }
            let e = ruleSet.rules[j]
            if rule.whileWaiting != e.whileWaiting { continue }   // they never run in the same state
            guard let when = e.when else { return e }
            if let r = when.customerMessageRange, range.isSubset(of: r) { return e }
        }
        return nil
    }

    /// A threshold-only, unguarded handoff rule `customer_messages: {at_least: N}`: the bot is
    /// silent after the Nth customer message of a session.
    private func thresholdHandoff() -> (Rule, Int)? {
        for rule in ruleSet.rules where rule.isUnguarded && !rule.whileWaiting && rule.unless == nil && rule.actions.contains(where: \.isHandoff) {
            if let r = rule.when?.customerMessageRange, r.upper == nil, r.lower >= 1 { return (rule, r.lower) }
        }
        return nil
    }

    private func ordinal(_ n: Int) -> String {
        let suffix = (11...13).contains(n % 100) ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th"
        return "\(n)\(suffix)"
    }
}
