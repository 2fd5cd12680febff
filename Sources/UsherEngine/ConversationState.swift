public import Foundation

/// Who speaks for the business in a conversation.
public enum Owner: String, Sendable, Hashable, Codable, CaseIterable {
    /// The bot answers.
    case bot
    /// Handed off; an agent has not written yet (the seed's `isAssignedToAgent = true`).
    case waiting
    /// A human agent has written: the bot is silent.
    case agent
}

/// Everything the engine remembers about one conversation for one bot. A value: the engine takes
/// one and returns the next; stores persist it with compare-and-set on `version`.
public struct ConversationState: Sendable, Hashable, Codable {
    public var conversationID: String
    public var owner: Owner = .bot
    /// 1 for the first session; each reset adds one.
    public var session: Int = 0
    public var sessionStartedAt: Date?
    /// Time of the last message of any sender — the clock for `idle_for` and `idle_reset`.
    public var lastActivityAt: Date?
    public var customerMessages: Int = 0
    public var botReplies: Int = 0
    public var fallbacksInARow: Int = 0
    /// What each rule that has fired did: a short array rather than dictionaries, because a
    /// conversation sees few rules and this is copied on every decision.
    public var marks: [RuleMark] = []
    /// Times of recent bot replies, newest last (for the loop guard).
    public var recentReplies: [Date] = []
    public var tags: [String] = []
    public var metadata: [String: String] = [:]
    /// Conversation fields set by the backend.
    public var channel: String?
    public var locale: String?
    public var customerName: String?
    public var customerID: String?
    /// The language, among the bot's, of the last message the bot decided on that told it (by
    /// its script, or by more words only that language's dictionary knows): what a text written
    /// per language answers in when the message itself does not tell ("ok"). Messages taken in
    /// while an agent owns the conversation do not change it (`Engine.decide` stops before the
    /// rules), so after a handoff it is the language the customer wrote in before it. Kept
    /// across sessions; nil until a message tells, and for bots with one language or no text
    /// per language.
    public var language: String?
    /// Bumped on every change; stores compare-and-set on it.
    public var version: Int = 0

    public init(conversationID: String, channel: String? = nil, locale: String? = nil,
                customerName: String? = nil, customerID: String? = nil) {
        self.conversationID = conversationID
        self.channel = channel
        self.locale = locale
        self.customerName = customerName
        self.customerID = customerID
    }

    /// Starts a new session: counters, `once` marks and the owner reset.
    public mutating func startSession(at time: Date) {
        session += 1
        sessionStartedAt = time
        owner = .bot
        customerMessages = 0
        botReplies = 0
        fallbacksInARow = 0
        for i in marks.indices where marks[i].firesThisSession != 0 { marks[i].firesThisSession = 0 }
        recentReplies = []
    }

    public func hasTag(_ tag: String) -> Bool { tags.contains(tag) }

    /// Times `rule` fired in this session (for `once` and sequences).
    public func fires(of rule: String) -> Int { marks.first { $0.rule == rule }?.firesThisSession ?? 0 }

    /// When `rule` last fired, in any session (for `cooldown`).
    public func lastFired(_ rule: String) -> Date? { marks.first { $0.rule == rule }?.lastFiredAt }

    /// Records that `rule` fired at `time`.
    public mutating func recordFire(of rule: String, at time: Date) {
        if let i = marks.firstIndex(where: { $0.rule == rule }) {
            marks[i].firesThisSession += 1
            marks[i].lastFiredAt = time
        } else {
            marks.append(RuleMark(rule: rule, firesThisSession: 1, lastFiredAt: time))
        }
    }
}

/// One rule's history in a conversation.
public struct RuleMark: Sendable, Hashable, Codable {
    public var rule: String
    /// Reset when a session starts.
    public var firesThisSession: Int
    /// Kept across sessions: cooldowns are about time.
    public var lastFiredAt: Date
}
