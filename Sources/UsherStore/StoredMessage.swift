public import Foundation
public import UsherEngine

/// A message or event as it stands in a store: what the worker reads.
public struct StoredMessage: Sendable, Hashable, Codable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A chat message (customer, agent, bot or system).
        case message
        /// The backend closed or resolved the conversation: the next message starts a new session.
        case close
    }

    /// The store-wide order of arrival, strictly increasing: the intake cursor. Messages with
    /// equal timestamps still have distinct sequence numbers, so none is skipped.
    public var seq: Int64
    public var id: String
    public var conversationID: String
    public var kind: Kind
    public var from: SenderRole
    public var senderID: String?
    public var senderName: String?
    public var text: String
    public var at: Date
    /// For bot and system messages: the rule that wrote it.
    public var ruleID: String?
    /// The conversation's channel and locale, as the backend set them (bots are chosen by
    /// channel; rules match on both).
    public var channel: String?
    public var locale: String?
    /// For bot replies: the buttons and links offered with it (`quick_replies`), in order.
    public var quickReplies: [QuickReply]

    public init(seq: Int64, id: String, conversationID: String, kind: Kind = .message, from: SenderRole,
                senderID: String? = nil, senderName: String? = nil, text: String, at: Date, ruleID: String? = nil,
                channel: String? = nil, locale: String? = nil, quickReplies: [QuickReply] = []) {
        self.channel = channel
        self.locale = locale
        self.quickReplies = quickReplies
        self.seq = seq
        self.id = id
        self.conversationID = conversationID
        self.kind = kind
        self.from = from
        self.senderID = senderID
        self.senderName = senderName
        self.text = text
        self.at = at
        self.ruleID = ruleID
    }

    /// As synthesized, except that `quickReplies` may be missing (none).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(seq: try c.decode(Int64.self, forKey: .seq), id: try c.decode(String.self, forKey: .id),
                  conversationID: try c.decode(String.self, forKey: .conversationID),
                  kind: try c.decode(Kind.self, forKey: .kind), from: try c.decode(SenderRole.self, forKey: .from),
                  senderID: try c.decodeIfPresent(String.self, forKey: .senderID),
                  senderName: try c.decodeIfPresent(String.self, forKey: .senderName),
                  text: try c.decode(String.self, forKey: .text), at: try c.decode(Date.self, forKey: .at),
                  ruleID: try c.decodeIfPresent(String.self, forKey: .ruleID),
                  channel: try c.decodeIfPresent(String.self, forKey: .channel),
                  locale: try c.decodeIfPresent(String.self, forKey: .locale),
                  quickReplies: try c.decodeIfPresent([QuickReply].self, forKey: .quickReplies) ?? [])
    }

    /// The engine's view of the message.
    public var message: Message {
        Message(id: id, conversationID: conversationID, from: from, senderID: senderID,
                senderName: senderName, text: text, at: at)
    }
}

/// A message a backend writes into the store (`usher send`, a chat front end, tests).
public struct NewMessage: Sendable, Hashable {
    public var id: String
    public var conversationID: String
    public var kind: StoredMessage.Kind
    public var from: SenderRole
    public var senderID: String?
    public var senderName: String?
    public var text: String
    public var at: Date
    /// Conversation fields, set when the conversation is created.
    public var channel: String?
    public var locale: String?

    public init(id: String = UUID().uuidString.lowercased(), conversationID: String, kind: StoredMessage.Kind = .message,
                from: SenderRole, senderID: String? = nil, senderName: String? = nil, text: String,
                at: Date = Date(), channel: String? = nil, locale: String? = nil) {
        self.id = id
        self.conversationID = conversationID
        self.kind = kind
        self.from = from
        self.senderID = senderID
        self.senderName = senderName
        self.text = text
        self.at = at
        self.channel = channel
        self.locale = locale
    }
}
