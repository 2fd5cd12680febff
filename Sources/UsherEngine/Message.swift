public import Foundation

/// Who wrote a message.
public enum SenderRole: String, Sendable, Hashable, Codable, CaseIterable {
    case customer, agent, bot, system
}

/// One inbound message, as the engine sees it.
public struct Message: Sendable, Hashable {
    public var id: String
    public var conversationID: String
    public var from: SenderRole
    public var senderID: String?
    public var senderName: String?
    public var text: String
    public var at: Date

    public init(id: String, conversationID: String, from: SenderRole, senderID: String? = nil,
                senderName: String? = nil, text: String, at: Date) {
        self.id = id
        self.conversationID = conversationID
        self.from = from
        self.senderID = senderID
        self.senderName = senderName
        self.text = text
        self.at = at
    }
}
