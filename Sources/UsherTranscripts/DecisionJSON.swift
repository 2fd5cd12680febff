import Foundation
public import UsherEngine
public import UsherRules

/// The JSON shape of decisions and effects, shared by `usher explain --format json` and
/// `usher replay --format json` so that tools read one shape.
public enum DecisionJSON {
    /// A decision as a JSON object: outcome, fired rules, effects, trace, state after, and
    /// `budget_exhausted` (`{budget, rules}`) when the decision spent its time budget.
    public static func object(_ d: Decision) -> [String: Any] {
        var o: [String: Any] = ["rule_set_version": d.ruleSetVersion, "fired": d.firedRules]
        o["outcome"] = outcomeName(d.outcome)
        o["effects"] = d.effects.map(effect)
        o["trace"] = (d.trace ?? []).map { t -> [String: Any] in
            var j: [String: Any] = ["rule": t.rule, "priority": t.priority]
            switch t.verdict {
            case .fired:
                j["verdict"] = "fired"
                if let matched = t.matched { j["matched"] = matched }
            case let .notMatched(r): j["verdict"] = "not_matched"; j["reason"] = r
            case let .blocked(r): j["verdict"] = "blocked"; j["reason"] = r
            case .disabled: j["verdict"] = "disabled"
            case let .notReached(r): j["verdict"] = "not_reached"; j["reason"] = r
            }
            return j
        }
        if let l = d.language {
            o["language"] = ["code": l.language, "reason": l.reasonName]
        }
        if let spent = d.budgetExhausted {
            o["budget_exhausted"] = ["budget": spent.budgetText, "rules": spent.rules] as [String: Any]
        }
        let s = d.state
        o["state"] = ["owner": s.owner.rawValue, "customer_messages": s.customerMessages, "bot_replies": s.botReplies,
                      "fallbacks_in_a_row": s.fallbacksInARow, "tags": s.tags, "metadata": s.metadata] as [String: Any]
        return o
    }

    /// The outcome's name: `ignored`, `takeover`, `silent`, `fired`, `fallback` or `no_match`.
    public static func outcomeName(_ outcome: Decision.Outcome) -> String {
        switch outcome {
        case .ignored: "ignored"
        case .takeover: "takeover"
        case .silent: "silent"
        case .fired: "fired"
        case .fallback: "fallback"
        case .noMatch: "no_match"
        }
    }

    /// An effect as a JSON object.
    public static func effect(_ e: Effect) -> [String: Any] {
        var o: [String: Any] = [:]
        for (k, v) in effectFields(e) { o[k] = v }
        if case let .reply(_, _, q) = e, !q.isEmpty {
            o["quick_replies"] = q.map { item -> [String: String] in
                var j = ["title": item.title]
                if let url = item.url { j["url"] = url }
                return j
            }
        }
        return o
    }

    /// An effect's keys and values, `type` first: every value but a reply's `quick_replies`
    /// (written beside them, when it has any) is a string.
    public static func effectFields(_ e: Effect) -> [(key: String, value: String)] {
        switch e {
        case let .reply(t, r, _): [("type", "reply"), ("text", t), ("rule", r)]
        case let .system(t, r): [("type", "system"), ("text", t), ("rule", r)]
        case let .handoff(reason, q, p, r): [("type", "handoff"), ("reason", reason), ("queue", q), ("priority", p.rawValue), ("rule", r)]
        case let .notify(t, q, reason, r): [("type", "notify"), ("text", t), ("queue", q), ("reason", reason), ("rule", r)]
        case let .tag(t): [("type", "tag"), ("tag", t)]
        case let .untag(t): [("type", "untag"), ("tag", t)]
        case let .set(k, v): [("type", "set"), ("key", k), ("value", v)]
        }
    }

    /// `usher explain --format json`: the decision plus the bot and the message text, pretty.
    public static func render(_ d: Decision, ruleSet: RuleSet, text: String) -> String {
        var o = object(d)
        o["bot"] = ruleSet.bot.id
        o["text"] = text
        let data = try! JSONSerialization.data(withJSONObject: o, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
