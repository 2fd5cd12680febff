import Foundation
public import UsherRules

/// What the engine decided for one message: the effects to write, the next state, and why.
public struct Decision: Sendable {
    /// The overall result, for logs, metrics and tests.
    public enum Outcome: Sendable, Hashable {
        /// Not evaluated: the bot's own message, a system notice, or another bot.
        case ignored(String)
        /// An agent wrote: the conversation is now the agent's.
        case takeover
        /// A customer message while an agent owns or is about to own the conversation.
        case silent(Owner)
        /// These rules fired (several with `continue`).
        case fired([String])
        /// No rule matched; the fallback answered.
        case fallback
        /// No rule matched and the bot has no fallback.
        case noMatch
    }

    public var outcome: Outcome
    public var effects: [Effect]
    public var state: ConversationState
    /// The rule-set version that decided.
    public var ruleSetVersion: String
    /// Every rule considered and its verdict (only when asked for: explain, tests, replay).
    public var trace: [RuleTrace]?
    /// Things operators should know: regex limits hit, a truncated message.
    public var events: [EngineEvent]
    /// Set when the decision spent its time budget (`limits.decision_budget`) before it was done.
    public var budgetExhausted: BudgetExhaustion?
    /// Set when a safety limit of bot.yaml (`limits.loop_guard`, `limits.max_bot_replies`)
    /// dropped this decision's replies.
    public var limit: ReplyLimit?
    /// The language of the first text written per language the decision sent (a reply or a
    /// notice), and why; nil when it sent none.
    public var language: LanguageChoice?

    public init(outcome: Outcome, effects: [Effect], state: ConversationState, ruleSetVersion: String,
                trace: [RuleTrace]? = nil, events: [EngineEvent] = []) {
        self.outcome = outcome
        self.effects = effects
        self.state = state
        self.ruleSetVersion = ruleSetVersion
        self.trace = trace
        self.events = events
    }

    /// Rule ids that fired (the fallback counts as `fallback`).
    public var firedRules: [String] {
        switch outcome {
        case let .fired(ids): ids
        case .fallback: ["fallback"]
        default: []
        }
    }

    public var replies: [String] { effects.compactMap { if case let .reply(t, _, _) = $0 { t } else { nil } } }
    /// The quick replies of each reply, in the order of `replies`.
    public var quickReplies: [[QuickReply]] { effects.compactMap { if case let .reply(_, _, q) = $0 { q } else { nil } } }
    public var handoff: (reason: String, queue: String)? {
        for e in effects { if case let .handoff(r, q, _, _) = e { return (r, q) } }
        return nil
    }
}

/// One effect to write through the store, in order. The index of an effect in
/// `Decision.effects` is part of its idempotency key.
public enum Effect: Sendable, Hashable {
    /// A bot message, with the buttons and links of its `quick_replies` (none by default).
    case reply(text: String, rule: String, quickReplies: [QuickReply] = [])
    case system(text: String, rule: String)
    case handoff(reason: String, queue: String, priority: HandoffPriority, rule: String)
    case tag(String)
    case untag(String)
    case notify(text: String, queue: String, reason: String, rule: String)
    case set(key: String, value: String)
}

/// Something an operator should know about a decision.
public enum EngineEvent: Sendable, Hashable {
    /// A regex gave up: `limit` is PCRE2's "match limit", "depth limit" or "heap limit", the
    /// pattern's own "time limit", or `decisionBudget` for the regex at which the decision's
    /// budget ran out (reported once a decision; `Decision.budgetExhausted` has the rest).
    case regexLimit(rule: String, pattern: String, limit: String)
    case truncated(bytes: Int)

    /// The `limit` of a `regexLimit` where the decision's time budget ran out.
    public static let decisionBudget = "decision budget"
}

/// A decision that spent its time budget: the regexes of `rules` counted as no match, the first
/// because the budget ran out while (or before) it ran, the others unrun. Rules without a regex
/// were still evaluated.
public struct BudgetExhaustion: Sendable, Hashable {
    /// The bot's `limits.decision_budget`.
    public var budget: Duration
    /// The rules whose regexes counted as no match for want of time, in the order tried.
    public var rules: [String]

    public init(budget: Duration, rules: [String]) {
        self.budget = budget
        self.rules = rules
    }

    /// The budget as bot.yaml writes it: `10ms`, `2s`.
    public var budgetText: String { Self.text(budget) }

    /// `10ms`, `2s` (`1.5ms` for what bot.yaml cannot write).
    public static func text(_ budget: Duration) -> String {
        let ms = Double(budget.components.seconds) * 1000 + Double(budget.components.attoseconds) / 1e15
        if ms >= 1000, ms.truncatingRemainder(dividingBy: 1000) == 0 { return "\(Int(ms / 1000))s" }
        return ms == ms.rounded() ? "\(Int(ms))ms" : "\(ms)ms"
    }
}

/// A safety limit of bot.yaml that dropped a decision's replies: the conversation was handed
/// off instead (the handoff's reason is `reason`), or, already waiting, the replies were dropped.
public struct ReplyLimit: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// `limits.max_bot_replies`: at most this many replies a session.
        case maxBotReplies(Int)
        /// `limits.loop_guard`: at most `replies` replies within `within` seconds.
        case loopGuard(BotConfig.LoopGuard)
    }

    public var kind: Kind
    /// The rules whose replies were dropped, in the order they fired.
    public var rules: [String]
    /// Whether the limit handed the conversation off (it was the bot's); else it was already
    /// waiting for an agent.
    public var handedOff: Bool

    public init(kind: Kind, rules: [String], handedOff: Bool) {
        self.kind = kind
        self.rules = rules
        self.handedOff = handedOff
    }

    /// The handoff reason the limit gives: `loop-guard`, `max-bot-replies`.
    public var reason: String {
        switch kind {
        case .maxBotReplies: "max-bot-replies"
        case .loopGuard: "loop-guard"
        }
    }

    /// `loop guard: 3 replies within 1m`, `max_bot_replies: 20 replies a session`.
    public var description: String {
        switch kind {
        case let .maxBotReplies(n): "max_bot_replies: \(n) repl\(n == 1 ? "y" : "ies") a session"
        case let .loopGuard(g): g.description
        }
    }
}

/// Why a rule did or did not fire.
public struct RuleTrace: Sendable, Hashable {
    public enum Verdict: Sendable, Hashable {
        case fired
        case notMatched(String)
        case blocked(String)
        case disabled
        case notReached(String)
    }
    public var rule: String
    public var priority: Int
    public var verdict: Verdict
    /// For a rule that fired on a keyword matched through another form of its words or a typo:
    /// how, as in "matched 'refund' (typo of 'refnd')". Nil when every keyword matched as written.
    public var matched: String?
}

/// The language a text written per language (`reply: {en: …, es: …}`, a notice) was sent in.
public struct LanguageChoice: Sendable, Hashable {
    /// Why this language.
    public enum Reason: Sendable, Hashable {
        /// The conversation's locale (as the backend set it: `es-MX`).
        case locale(String)
        /// The message's words (or script) are in this language.
        case detected
        /// The message does not tell, and an earlier message of the conversation did
        /// (`ConversationState.language`).
        case conversation
        /// Neither told: the bot's first language (bot.yaml's `language`).
        case botLanguage
        /// The text has none in any of those languages: its first.
        case firstListed
    }

    public var language: String
    public var reason: Reason

    public init(language: String, reason: Reason) {
        self.language = language
        self.reason = reason
    }

    /// "es (the conversation's locale es-MX)", for explain and replay.
    public var description: String {
        switch reason {
        case let .locale(l): "\(language) (the conversation's locale \(l))"
        case .detected: "\(language) (the language of the message)"
        case .conversation: "\(language) (the conversation's language, from an earlier message)"
        case .botLanguage: "\(language) (the bot's first language: the message does not tell)"
        case .firstListed: "\(language) (the first written: there is no text in the bot's languages)"
        }
    }

    /// `locale`, `detected`, `conversation`, `bot_language` or `first_listed`, for JSON.
    public var reasonName: String {
        switch reason {
        case .locale: "locale"
        case .detected: "detected"
        case .conversation: "conversation"
        case .botLanguage: "bot_language"
        case .firstListed: "first_listed"
        }
    }
}
