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

    /// Unique per effect: what a consumer deduplicates on.
    public var idempotencyKey: String {
        switch self {
        case let .message(m): m.id
        case let .handoff(h): h.idempotencyKey
        case let .notification(n): n.notification.idempotencyKey
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
