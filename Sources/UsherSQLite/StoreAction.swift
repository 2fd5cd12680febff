public import Foundation
public import UsherStore

/// An effect the store has committed, as a delivery channel (stdout, a webhook) hands it on.
public enum StoreAction: Sendable, Hashable {
    /// A reply (`from == .bot`) or a system notice (`from == .system`); its `id` is its
    /// idempotency key.
    case message(StoredMessage)
    /// The conversation was handed to agents: its owner became `waiting`.
    case handoff(HandoffRecord)
    /// A notification for agents.
    case notification(StoredNotification)
    /// What a decision's `tag` and `untag` actions changed: handed on only to a channel that
    /// asks for them (`deliverActions(tags: true)`), whose backend keeps tags of its own.
    case tags(TagChangeRecord)

    /// Unique per effect: what a consumer deduplicates on.
    public var idempotencyKey: String {
        switch self {
        case let .message(m): m.id
        case let .handoff(h): h.idempotencyKey
        case let .notification(n): n.notification.idempotencyKey
        case let .tags(t): t.idempotencyKey
        }
    }
}

/// One handoff, as recorded in the `handoffs` table: open while the conversation waits for an
/// agent, kept afterwards as history.
public struct HandoffRecord: Sendable, Hashable {
    /// Increases with every handoff: the delivery order.
    public var id: Int64
    public var bot: String
    public var conversationID: String
    /// `bot:inbound-id:handoff`.
    public var idempotencyKey: String
    /// The inbound message whose decision handed off.
    public var messageID: String
    /// From the handoff's notification (absent when the handoff raised none).
    public var queue: String?
    public var reason: String?
    public var customerName: String?
    /// The rule of the handoff's system notice, when it wrote one.
    public var ruleID: String?
    public var waitingSince: Date

    public init(id: Int64, bot: String, conversationID: String, idempotencyKey: String, messageID: String,
                queue: String?, reason: String?, customerName: String?, ruleID: String?, waitingSince: Date) {
        self.id = id
        self.bot = bot
        self.conversationID = conversationID
        self.idempotencyKey = idempotencyKey
        self.messageID = messageID
        self.queue = queue
        self.reason = reason
        self.customerName = customerName
        self.ruleID = ruleID
        self.waitingSince = waitingSince
    }
}

/// What one commit's `tag` and `untag` actions changed, as recorded in the `tag_changes` table:
/// for a delivery channel whose backend keeps tags of its own (Chatwoot's labels).
public struct TagChangeRecord: Sendable, Hashable {
    /// Increases with every commit that changed tags: the delivery order.
    public var seq: Int64
    public var bot: String
    public var conversationID: String
    /// `bot:inbound-id:tags`.
    public var idempotencyKey: String
    /// The inbound message whose decision changed the tags.
    public var messageID: String
    public var added: [String]
    public var removed: [String]
    public var at: Date

    public init(seq: Int64, bot: String, conversationID: String, idempotencyKey: String, messageID: String,
                added: [String], removed: [String], at: Date) {
        self.seq = seq
        self.bot = bot
        self.conversationID = conversationID
        self.idempotencyKey = idempotencyKey
        self.messageID = messageID
        self.added = added
        self.removed = removed
        self.at = at
    }
}
