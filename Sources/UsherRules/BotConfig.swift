public import Foundation
public import UsherText

/// A validated `bot.yaml`.
public struct BotConfig: Sendable {
    /// Handoff defaults for every `handoff` action.
    public struct HandoffDefaults: Sendable {
        public var systemMessage: Template
        public var queue: String
        public var notify: Bool
        public static let seed = HandoffDefaults(
            systemMessage: Template(literal: "Thanks for your question! We're connecting you to a support agent now."),
            queue: "general", notify: true)
    }

    /// `loop_guard: {replies, within}`.
    public struct LoopGuard: Sendable, Hashable {
        public var replies: Int
        public var within: TimeInterval
    }

    public var id: String
    public var name: String
    public var senderId: String
    public var timeZone: TimeZone
    /// Gregorian, in `timeZone`: schedules are evaluated with it.
    public var calendar: Calendar
    /// Rule files, resolved, in bot.yaml order.
    public var ruleFiles: [String]
    public var schedules: [Schedule]
    /// A customer message after this much silence starts a new session.
    public var idleReset: TimeInterval?
    public var maxBotReplies: Int?
    public var loopGuard: LoopGuard?
    /// The most time one decision may spend matching: once it is spent, the regexes of the
    /// rules left count as no match (`limits.decision_budget`).
    public var decisionBudget: Duration = BotConfig.defaultDecisionBudget
    public var handoff: HandoffDefaults
    /// Conversations this bot answers when several bots share a store: globs over the
    /// conversation's channel. Empty: every conversation no other bot claims.
    public var channels: [Glob] = []
    /// Where bot.yaml lives.
    public var path: String
    /// The languages the bot's customers write in (`language`), as ISO 639 codes (`en`, `es`), in
    /// bot.yaml's order: the first answers when a reply cannot tell. Empty: not said.
    public var languages: [String] = []
    /// How keywords match besides as written (`matching: {word_forms, typos}`), for every keyword
    /// whose rule or entry does not say `exact: true`. Exact matching when bot.yaml says nothing.
    public var matching: WordMatching = .exact
    /// The spelling dictionaries of `languages` (those written with spaces between words), read
    /// when `matching.typos` is on: a word spelled right is never a typo.
    public var dictionaries: [SpellingDictionary] = []

    public init(id: String, name: String, senderId: String, timeZone: TimeZone, ruleFiles: [String],
                schedules: [Schedule] = [], idleReset: TimeInterval? = nil, maxBotReplies: Int? = nil,
                loopGuard: LoopGuard? = nil, handoff: HandoffDefaults = .seed, path: String) {
        self.id = id
        self.name = name
        self.senderId = senderId
        self.timeZone = timeZone
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = timeZone
        self.calendar = cal
        self.ruleFiles = ruleFiles
        self.schedules = schedules
        self.idleReset = idleReset
        self.maxBotReplies = maxBotReplies
        self.loopGuard = loopGuard
        self.handoff = handoff
        self.path = path
    }

    /// `limits.decision_budget` when bot.yaml does not set it.
    public static let defaultDecisionBudget: Duration = .milliseconds(10)
    /// The values `limits.decision_budget` may take.
    public static let decisionBudgetRange: ClosedRange<Duration> = .milliseconds(1) ... .seconds(60)

    public func scheduleIndex(named name: String) -> Int? {
        schedules.firstIndex { $0.name == name }
    }
}
