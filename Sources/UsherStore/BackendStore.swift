public import Foundation
import UsherEngine

/// What a backend or the CLI does with a store (`usher send`, `usher chat`, `usher inbox`, tests):
/// write messages as a chat app would, read them back. Not used by the worker; a store that is
/// only a view of someone else's chat (a webhook's) need not offer it, and the commands say so.
public protocol BackendStore: ChatStore {
    /// Writes a message as a backend would; the same id again returns the message stored.
    @discardableResult
    func append(_ message: NewMessage) async throws -> StoredMessage

    /// Every message of a conversation, in order (bot replies and notices included).
    func transcript(conversation: String) async throws -> [StoredMessage]

    /// Conversations waiting for an agent, oldest handoff first (the seed's agent dashboard).
    func inbox(bot: String) async throws -> [InboxEntry]

    /// The conversation's fields as the backend wrote them, or `nil` for an unknown conversation.
    func conversation(_ id: String) async throws -> ConversationInfo?
}

/// A conversation's own fields, as the backend created it.
public struct ConversationInfo: Sendable, Hashable, Codable {
    public var id: String
    /// The sender id of the first customer message.
    public var customerID: String?
    public var channel: String?
    public var locale: String?
    /// When its first message was written.
    public var createdAt: Date
    public init(id: String, customerID: String?, channel: String?, locale: String?, createdAt: Date) {
        self.id = id
        self.customerID = customerID
        self.channel = channel
        self.locale = locale
        self.createdAt = createdAt
    }
}

/// A conversation waiting for an agent.
public struct InboxEntry: Sendable, Hashable, Codable {
    public var conversationID: String
    public var customerName: String?
    public var queue: String?
    public var reason: String?
    public var waitingSince: Date
    public var lastMessage: String?
    public init(conversationID: String, customerName: String?, queue: String?, reason: String?,
                waitingSince: Date, lastMessage: String?) {
        self.conversationID = conversationID
        self.customerName = customerName
        self.queue = queue
        self.reason = reason
        self.waitingSince = waitingSince
        self.lastMessage = lastMessage
    }
}

