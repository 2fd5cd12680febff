public import UsherRules

/// The numbers of a replay for one bot, added up conversation by conversation (so a replay
/// never needs all conversations at once).
public struct ReplaySummary: Sendable {
    /// A pattern that hit a PCRE2 limit (counted as no match).
    public struct RegexLimit: Sendable, Hashable {
        /// The rule, the pattern as written, and the limit it hit (`match limit`, …).
        public var rule: String
        public var pattern: String
        public var limit: String
    }

    /// A bot message that would have come after a human agent had already written.
    public struct SpokeOver: Sendable, Hashable {
        /// The conversation id.
        public var conversation: String
        /// Index into the conversation's steps.
        public var step: Int
        /// The customer message of the session.
        public var customerMessage: Int?
        /// The customer's message the bot answered.
        public var text: String
        /// The rules that fired.
        public var rules: [String]
        /// The first thing the bot would have said.
        public var said: String
    }

    /// The bot's id.
    public let bot: String
    /// Every rule id in evaluation order, then `fallback` when the bot has one.
    public let ruleIDs: [String]
    /// The bot's rules, the fallback aside: the count `usher check` prints.
    public let ruleCount: Int

    /// Conversations, and recorded messages by sender.
    public private(set) var conversations = 0
    public private(set) var customerMessages = 0
    public private(set) var agentMessages = 0
    public private(set) var botMessages = 0
    public private(set) var systemMessages = 0
    /// Customer messages on which rules were evaluated (a rule fired, the fallback answered, or
    /// nothing matched).
    public private(set) var decided = 0
    /// Customer messages the bot was silent on: waiting for an agent, or an agent owns the conversation.
    public private(set) var silentWaiting = 0
    public private(set) var silentAgent = 0
    /// Agent messages not given to the engine (`--ignore-agents`).
    public private(set) var notFed = 0

    /// Replies and system notices the bot would have written, and conversations with a reply.
    public private(set) var replies = 0
    public private(set) var systemNotices = 0
    public private(set) var conversationsWithReplies = 0

    /// Handoffs, in total and by reason.
    public private(set) var handoffs = 0
    public private(set) var handoffsByReason: [String: Int] = [:]
    /// Customer message of the session (1-based) at which handoffs happened → how many.
    public private(set) var handoffPositions: [Int: Int] = [:]
    /// Conversations with at least one handoff.
    public private(set) var conversationsHandedOff = 0

    /// Agent messages that took a conversation over from the bot or the queue.
    public private(set) var takeovers = 0
    /// … of which came while the bot still owned the conversation (before any handoff).
    public private(set) var takeoversBeforeHandoff = 0

    /// Decisions in which the bot would have written after a human agent had (`ReplayStep.spokeOverHuman`), the conversations, the rules, the first few.
    public private(set) var spokeOverHuman = 0
    public private(set) var spokeOverConversations = 0
    public private(set) var spokeOverByRule: [String: Int] = [:]
    public private(set) var spokeOverExamples: [SpokeOver] = []

    /// Rule id → decisions in which it fired.
    public private(set) var ruleHits: [String: Int] = [:]
    /// Regex limits hit, and messages truncated for matching.
    public private(set) var regexLimits: [RegexLimit: Int] = [:]
    public private(set) var truncations = 0

    /// An empty summary for `ruleSet`.
    public init(ruleSet: RuleSet) {
        bot = ruleSet.bot.id
        ruleIDs = ruleSet.rules.map(\.id) + (ruleSet.fallback == nil ? [] : ["fallback"])
        ruleCount = ruleSet.rules.count
    }

    /// Adds one conversation: the bot's decisions, or the other bot's with `against: true`.
    public mutating func add(_ c: ReplayConversation, against: Bool = false, keepExamples: Int = 10) {
        conversations += 1
        var replied = false, handedOff = false, spokeOver = false
        for (i, step) in c.steps.enumerated() {
            switch step.message.from {
            case .customer: customerMessages += 1
            case .agent: agentMessages += 1
            case .bot: botMessages += 1
            case .system: systemMessages += 1
            }
            guard let o = against ? step.against : step.bot else {
                if step.message.from == .agent { notFed += 1 }
                continue
            }
            switch o.outcome {
            case .fired, .fallback, .noMatch: decided += 1
            case let .silent(owner): if owner == .agent { silentAgent += 1 } else { silentWaiting += 1 }
            case .takeover:
                if o.tookOver {
                    takeovers += 1
                    if o.ownerBefore == .bot { takeoversBeforeHandoff += 1 }
                }
            case .ignored: break
            }
            for rule in o.fired { ruleHits[rule, default: 0] += 1 }
            var spoke = false
            for e in o.effects {
                switch e {
                case .reply: replies += 1; replied = true; spoke = true
                case .system: systemNotices += 1; spoke = true
                case let .handoff(reason, _, _, _):
                    handoffs += 1
                    handedOff = true
                    handoffsByReason[reason, default: 0] += 1
                    handoffPositions[o.customerMessage ?? 0, default: 0] += 1
                default: break
                }
            }
            if spoke && step.humanHadWritten {
                spokeOverHuman += 1
                spokeOver = true
                for rule in o.fired { spokeOverByRule[rule, default: 0] += 1 }
                if spokeOverExamples.count < keepExamples, spokeOverExamples.last?.conversation != c.id {
                    let said = o.effects.lazy.compactMap { e -> String? in
                        switch e { case let .reply(t, _, _), let .system(t, _): t; default: nil }
                    }.first ?? ""
                    spokeOverExamples.append(SpokeOver(conversation: c.id, step: i, customerMessage: o.customerMessage,
                                                       text: step.message.text, rules: o.fired, said: said))
                }
            }
            for e in o.events {
                switch e {
                case let .regexLimit(rule, pattern, limit): regexLimits[RegexLimit(rule: rule, pattern: pattern, limit: limit), default: 0] += 1
                case .truncated: truncations += 1
                }
            }
        }
        if replied { conversationsWithReplies += 1 }
        if handedOff { conversationsHandedOff += 1 }
        if spokeOver { spokeOverConversations += 1 }
    }

    /// Rules that fired at least once, most hits first (ties in evaluation order).
    public var rulesByHits: [(rule: String, hits: Int)] {
        ruleIDs.enumerated().compactMap { i, id in ruleHits[id].map { (i, id, $0) } }
            .sorted { $0.2 != $1.2 ? $0.2 > $1.2 : $0.0 < $1.0 }
            .map { ($0.1, $0.2) }
    }

    /// Rules (and the fallback) that never fired, in evaluation order: what the transcripts do
    /// not cover.
    public var neverFired: [String] { ruleIDs.filter { ruleHits[$0] == nil } }

    /// How many of the `ruleCount` rules fired at least once (the fallback is not a rule).
    public var rulesFired: Int { ruleIDs.prefix(ruleCount).count { ruleHits[$0] != nil } }

    /// Whether the bot has a fallback and it answered at least once.
    public var fallbackUsed: Bool { ruleIDs.count > ruleCount && ruleHits["fallback"] != nil }

    /// "7 of 21 rules fired" (", and the fallback" when it answered): rules counted as `usher
    /// check` counts them.
    public var rulesFiredText: String {
        "\(rulesFired) of \(ruleCount) rule\(ruleCount == 1 ? "" : "s") fired" + (fallbackUsed ? ", and the fallback" : "")
    }

    /// Handoff reasons, most frequent first (ties by name).
    public var handoffReasons: [(reason: String, count: Int)] {
        handoffsByReason.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Regex limits hit, most frequent first.
    public var regexLimitHits: [(limit: RegexLimit, count: Int)] {
        regexLimits.sorted { $0.value != $1.value ? $0.value > $1.value : ($0.key.rule, $0.key.pattern) < ($1.key.rule, $1.key.pattern) }
            .map { ($0.key, $0.value) }
    }
}
