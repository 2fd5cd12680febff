public import UsherEngine

/// What one bot decided for one replayed message: the part of a `Decision` a report needs
/// (not the state, which the replay keeps only while the conversation is in flight).
public struct ReplayOutcome: Sendable, Hashable {
    /// The engine's outcome, the effects it would have written, and what operators should know.
    public var outcome: Decision.Outcome
    public var effects: [Effect]
    public var events: [EngineEvent]
    /// The session after the message (1 for the first).
    public var session: Int
    /// For a customer message: its number in the session (the engine's `customer_messages`,
    /// counting this one); `nil` for other senders.
    public var customerMessage: Int?
    /// Who owned the conversation just before the message (after a session reset).
    public var ownerBefore: Owner
    /// The language a reply written per language answered in, and why.
    public var language: LanguageChoice?

    /// An outcome from its parts.
    public init(outcome: Decision.Outcome, effects: [Effect], events: [EngineEvent], session: Int,
                customerMessage: Int?, ownerBefore: Owner) {
        self.outcome = outcome
        self.effects = effects
        self.events = events
        self.session = session
        self.customerMessage = customerMessage
        self.ownerBefore = ownerBefore
    }

    /// The parts of `decision` a report needs; `before` is the state the engine was given.
    public init(_ decision: Decision, before: ConversationState, message: Message) {
        let s = decision.state
        // A session reset inside decide() puts the bot back in charge before it decides.
        let owner = s.session != before.session ? Owner.bot : before.owner
        self.init(outcome: decision.outcome, effects: decision.effects, events: decision.events, session: s.session,
                  customerMessage: message.from == .customer && s.session > 0 ? s.customerMessages : nil, ownerBefore: owner)
        language = decision.language
    }

    /// An agent's message that took the conversation from the bot or from the queue.
    public var tookOver: Bool {
        if case .takeover = outcome { return ownerBefore != .agent }
        return false
    }

    /// Rule ids that fired (`fallback` for the fallback), as `Decision.firedRules`.
    public var fired: [String] {
        switch outcome {
        case let .fired(ids): ids
        case .fallback: ["fallback"]
        default: []
        }
    }

    /// Whether the bot wrote anything the customer sees (a reply or a system notice).
    public var spoke: Bool {
        effects.contains { switch $0 { case .reply, .system: true; default: false } }
    }

    /// The bot's replies, with the rule and the quick replies of each.
    public var replies: [(text: String, rule: String, quickReplies: [QuickReply])] {
        effects.compactMap { if case let .reply(t, r, q) = $0 { (t, r, q) } else { nil } }
    }

    /// The handoff of this decision, if any.
    public var handoff: (reason: String, queue: String, rule: String)? {
        for e in effects { if case let .handoff(reason, queue, _, rule) = e { return (reason, queue, rule) } }
        return nil
    }

    /// A short name for grouping differences: the fired rules joined with `+`, or what
    /// happened instead (`silent`, `no match`, `takeover`, `ignored`).
    public var label: String {
        switch outcome {
        case let .fired(ids): ids.joined(separator: "+")
        case .fallback: "fallback"
        case let .silent(owner): owner == .agent ? "silent (agent)" : "silent (waiting)"
        case .noMatch: "no match"
        case .takeover: "takeover"
        case .ignored: "ignored"
        }
    }

    /// Same fired rules and same effects: what `--against` compares.
    public func sameDecision(as other: ReplayOutcome) -> Bool {
        fired == other.fired && effects == other.effects
    }

    /// The outcome's name in reports (`fired`, `fallback`, `no_match`, `silent`, `takeover`,
    /// `ignored`), as `usher explain --format json` prints it.
    public var outcomeName: String { DecisionJSON.outcomeName(outcome) }
}
