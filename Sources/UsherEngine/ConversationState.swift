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
    /// Per rule id: times fired this session (for `once` and sequences).
    public var firedThisSession: [String: Int] = [:]
    /// Per rule id: last time fired (for `cooldown`; kept across sessions).
    public var lastFiredAt: [String: Date] = [:]
    /// Times of recent bot replies, newest last (for the loop guard).
    public var recentReplies: [Date] = []
    public var tags: [String] = []
    public var metadata: [String: String] = [:]
    /// Conversation fields set by the backend.
    public var channel: String?
    public var locale: String?
    public var customerName: String?
    public var customerID: String?
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
        firedThisSession = [:]
        recentReplies = []
    }

    public func hasTag(_ tag: String) -> Bool { tags.contains(tag) }
}
