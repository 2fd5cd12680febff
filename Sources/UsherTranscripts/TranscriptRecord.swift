import Foundation
public import UsherEngine

/// The two shapes of transcript line Usher reads (both may appear in one file).
public enum TranscriptFormat: String, Sendable, Hashable {
    /// DESIGN.md §5: one message per line, conversations interleaved in time order.
    case events
    /// The chat-dataset shape: one whole conversation per line, `{"id", "turns": […]}`.
    case turns
}

/// One message read from a transcript, and the line it came from.
public struct TranscriptMessage: Sendable, Hashable {
    /// The message as the engine sees it.
    public var message: Message
    /// 1-based line in the transcript file.
    public var line: Int
    /// Conversation fields a line may set (`channel`, `locale`); the first value seen counts.
    public var channel: String?
    public var locale: String?

    /// A message read from `line`.
    public init(message: Message, line: Int, channel: String? = nil, locale: String? = nil) {
        self.message = message
        self.line = line
        self.channel = channel
        self.locale = locale
    }
}

/// A whole conversation read from one line of the chat-dataset shape.
public struct TranscriptConversation: Sendable, Hashable {
    /// The conversation id (`id`, or `FILE:LINE` when the line has none).
    public var id: String
    /// 1-based line in the transcript file.
    public var line: Int
    /// Conversation fields the line sets, if any.
    public var channel: String?
    public var locale: String?
    /// The turns in order, with the times the reader assigned.
    public var messages: [TranscriptMessage]

    /// A conversation read from `line`.
    public init(id: String, line: Int, channel: String? = nil, locale: String? = nil, messages: [TranscriptMessage]) {
        self.id = id
        self.line = line
        self.channel = channel
        self.locale = locale
        self.messages = messages
    }
}

/// What one transcript line holds.
public enum TranscriptRecord: Sendable, Hashable {
    /// One message of an interleaved conversation (`{"conversation", "id", "at", "from", …}`).
    case event(TranscriptMessage)
    /// A complete conversation (`{"id", "turns": [{"role", "content"}, …]}`).
    case conversation(TranscriptConversation)
}
