public import Foundation
import UsherYAML
import UsherDiagnostics
public import UsherText

/// A validated `bot.yaml`.
public struct BotConfig: Sendable {
    /// Handoff defaults for every `handoff` action.
    public struct HandoffDefaults: Sendable {
        /// Written per language or once (`LocalizedTemplate`).
        public var systemMessage: LocalizedTemplate
        public var queue: String
        public var notify: Bool
        public static let seed = HandoffDefaults(
            systemMessage: .text(Template(literal: "Thanks for your question! We're connecting you to a support agent now.")),
            queue: "general", notify: true)
    }

    /// `loop_guard: {replies, within, message}`.
    public struct LoopGuard: Sendable, Hashable, CustomStringConvertible {
        public var replies: Int
        public var within: TimeInterval
        /// The notice the customer sees when the guard hands off; `nil`: the bot's
        /// `handoff.system_message`.
        public var message: LocalizedTemplate?

        public init(replies: Int, within: TimeInterval, message: LocalizedTemplate? = nil) {
            self.replies = replies
            self.within = within
            self.message = message
        }

        /// `loop guard: 3 replies within 1m`.
        public var description: String {
            "loop guard: \(replies) repl\(replies == 1 ? "y" : "ies") within \(DurationText.format(within))"
        }
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

    /// Whether `id` can be a bot's id: lowercase letters, digits and '-', starting with a
    /// letter or digit (`support`, `shop-es`).
    public static func isValidID(_ id: String) -> Bool { BotFileParser.isValidID(id) }

    /// The zone a wrong `timezone:` most likely means: the one whose city it names ('London',
    /// 'new york'), whatever the case, or the nearest by spelling, of the whole name
    /// ('Asia/Shangai') or of the city ('Londn'). Abbreviations ('CST') are not guessed: each
    /// stands for several zones.
    public static func nearestTimeZone(to text: String) -> String? {
        func key(_ s: some StringProtocol) -> String { s.lowercased().replacingOccurrences(of: " ", with: "_") }
        let zones = TimeZone.knownTimeZoneIdentifiers.filter { $0.contains("/") }
        // City → its zone; where two zones share a city the shorter name (the canonical one).
        var byCity: [String: String] = [:]
        for zone in zones {
            let city = key(zone.split(separator: "/").last!)
            if byCity[city].map({ zone.count < $0.count }) ?? true { byCity[city] = zone }
        }
        let wanted = key(text)
        if let zone = zones.first(where: { key($0) == wanted }) ?? byCity[wanted] { return zone }
        if let zone = Suggestion.closest(to: text, in: zones) { return zone }
        return Suggestion.closest(to: wanted, in: byCity.keys.sorted()).flatMap { byCity[$0] }
    }
}
