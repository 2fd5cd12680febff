import Foundation
import UsherEngine
import UsherRules
import UsherTranscripts

/// The text of `usher explain`: the situation, every rule's verdict, the effects.
struct ExplainReport {
    let ruleSet: RuleSet
    let decision: Decision
    let text: String
    let now: Date
    let colour: Bool

    func render() -> String {
        let s = decision.state
        let bot = ruleSet.bot
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = bot.timeZone
        f.dateFormat = "EEE yyyy-MM-dd HH:mm"
        var out = "\(bold(bot.id)) (rule set \(decision.ruleSetVersion), \(ruleSet.rules.count) rules)\n"
        out += "message: \"\(text)\"\n"
        out += "context: customer message \(s.customerMessages) of the session, \(f.string(from: now)) \(bot.timeZone.identifier), owner \(ownerBefore)\n\n"

        out += ruleLines()
        out += "\n"
        switch decision.outcome {
        case let .silent(owner):
            out += "The bot stays silent: the conversation is owned by \(owner == .agent ? "an agent" : "the agent queue (waiting)").\n"
        case .noMatch:
            out += "No rule fired and the bot has no fallback: the bot says nothing.\n"
        case let .ignored(why):
            out += "Ignored: \(why).\n"
        case .takeover:
            out += "An agent took over.\n"
        case .fired, .fallback:
            out += "Effects:\n"
            for e in decision.effects { out += "  " + Self.describe(e) + "\n" }
            if let language = decision.language { out += "Language: \(language.description)\n" }
        }
        if let spent = decision.budgetExhausted {
            let n = spent.rules.count
            out += paint("warning: ", "33") + "the decision spent its time budget (\(spent.budgetText), limits.decision_budget in bot.yaml) at rule '\(spent.rules[0])': the regex\(n == 1 ? "" : "es") of \(n == 1 ? "that rule" : "\(n) rules from there on") counted as no match\n"
        }
        for e in decision.events {
            switch e {
            case let .regexLimit(_, _, limit) where limit == EngineEvent.decisionBudget:
                break   // said above, with the rules it cost
            case let .regexLimit(rule, pattern, limit):
                out += paint("warning: ", "33") + "regex '\(pattern)' of rule '\(rule)' hit its \(limit); counted as no match\n"
            case let .truncated(bytes):
                out += paint("note: ", "36") + "the message (\(bytes) bytes) was truncated for matching\n"
            }
        }
        out += "\nstate after: customer_messages \(s.customerMessages), bot_replies \(s.botReplies), fallbacks_in_a_row \(s.fallbacksInARow), owner \(s.owner.rawValue)"
        if !s.tags.isEmpty { out += ", tags [\(s.tags.joined(separator: ", "))]" }
        if let l = s.language { out += ", language \(l)" }
        return out + "\n"
    }

    /// One line per rule of the trace, in evaluation order, then the fallback's: shared with
    /// `usher test`, which prints them under a failing step. With `keeping`, only those rules'
    /// lines, then one line that counts the others by verdict: a failing step's trace shows
    /// the rules that matter to it, not twenty that did not match.
    func ruleLines(indent: String = "  ", keeping: Set<String>? = nil, foldNote: String = "") -> String {
        var out = ""
        let trace = decision.trace ?? []
        let shown = keeping.map { keep in trace.filter { keep.contains($0.rule) } } ?? trace
        let width = max(8, shown.map(\.rule.count).max() ?? 8) + 1
        for t in shown {
            let (mark, why): (String, String) = switch t.verdict {
            case .fired: (paint("✓", "32"), paint("fired", "32") + (t.matched.map { ": " + $0 } ?? ""))
            case let .notMatched(r): (dim("·"), r)
            case let .blocked(r): (paint("✗", "33"), r)
            case .disabled: (dim("·"), "disabled (enabled: false)")
            case let .notReached(r): (dim("·"), dim("not reached: \(r)"))
            }
            out += "\(indent)\(mark) \(t.rule.padding(width)) \(dim("priority " + String(t.priority).padding(5))) \(why)\n"
        }
        if ruleSet.fallback != nil {
            let used = decision.outcome == .fallback
            out += "\(indent)\(used ? paint("✓", "32") : dim("·")) \("fallback".padding(width)) \(dim("              ")) \(used ? paint("used: no rule fired", "32") : dim("not used"))\n"
        }
        if shown.count < trace.count {
            var counts: [(String, Int)] = [("did not match", 0), ("not reached", 0), ("disabled", 0)]
            for t in trace where !(keeping?.contains(t.rule) ?? true) {
                switch t.verdict {
                case .notMatched: counts[0].1 += 1
                case .notReached: counts[1].1 += 1
                case .disabled: counts[2].1 += 1
                case .fired, .blocked: break   // always kept
                }
            }
            let folded = trace.count - shown.count
            out += "\(indent)\(dim("· \(folded) other rule\(folded == 1 ? "" : "s"): " + counts.filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }.joined(separator: ", ") + foldNote))\n"
        }
        if let limit = decision.limit { out += "\(indent)\(paint("✗", "33")) \(Self.describe(limit))\n" }
        return out
    }

    /// `loop guard: 3 replies within 1m: the reply of 'opening' was dropped; handed off (reason
    /// loop-guard)`: a limit names itself, or the customer's missing answer is a mystery.
    static func describe(_ limit: ReplyLimit) -> String {
        let rules = limit.rules.map { "'\($0)'" }.joined(separator: ", ")
        let dropped = "the repl\(limit.rules.count == 1 ? "y" : "ies") of \(rules) \(limit.rules.count == 1 ? "was" : "were") dropped"
        return "\(limit): \(dropped); " + (limit.handedOff ? "handed off (reason \(limit.reason))" : "the conversation already waits for an agent")
    }

    private var ownerBefore: String {
        if case let .silent(o) = decision.outcome { return o.rawValue }
        return decision.effects.contains { if case .handoff = $0 { true } else { false } } ? "bot" : decision.state.owner.rawValue
    }

    static func describe(_ e: Effect) -> String {
        switch e {
        case let .reply(t, r, q): "reply    \"\(t)\"  (\(r))" + (q.isEmpty ? "" : "\n           buttons  " + QuickReply.line(q))
        case let .system(t, r): "system   \"\(t)\"  (\(r))"
        case let .handoff(reason, q, p, _): "handoff  reason \(reason), queue \(q), priority \(p.rawValue)"
        case let .notify(t, q, _, _): "notify   \(q): \"\(t)\""
        case let .tag(t): "tag      \(t)"
        case let .untag(t): "untag    \(t)"
        case let .set(k, v): "set      \(k) = \"\(v)\""
        }
    }

    private func paint(_ s: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }
    private func dim(_ s: String) -> String { paint(s, "2") }
    private func bold(_ s: String) -> String { paint(s, "1") }
}

/// `--format json` of explain: the shape lives in UsherTranscripts, shared with `usher replay`.
typealias DecisionJSON = UsherTranscripts.DecisionJSON
