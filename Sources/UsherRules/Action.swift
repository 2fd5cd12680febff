
/// What a rule does when it fires (`then`, `fallback`).
public enum Action: Sendable, Hashable {
    case reply(Reply)
    case system(Template)
    case handoff(Handoff)
    case tag(String)
    case untag(String)
    case notify(text: Template, queue: String?)
    case set([MetadataEntry])

    /// Whether the action writes a bot message.
    public var isReply: Bool { if case .reply = self { true } else { false } }
    public var isHandoff: Bool { if case .handoff = self { true } else { false } }

    /// Every template the action renders.
    public var templates: [Template] {
        switch self {
        case let .reply(r): r.texts
        case let .system(t): [t]
        case let .handoff(h): h.message.map { [$0] } ?? []
        case let .notify(t, _): [t]
        case let .set(entries): entries.map(\.value)
        case .tag, .untag: []
        }
    }
}

/// The forms of `reply`.
public indirect enum Reply: Sendable, Hashable {
    /// One text.
    case text(Template)
    /// `[a, b, c]`: rotates deterministically per conversation.
    case variants([Template])
    /// `{sequence: […]}`: the nth firing in a session gets the nth text (the last repeats).
    case sequence([Template])
    /// `{en: …, es: …}`: one of the other forms per language, in the file's order; the engine
    /// answers in the customer's language (`Decision.language`).
    case languages([LanguageReply])

    public var texts: [Template] {
        switch self {
        case let .text(t): [t]
        case let .variants(ts), let .sequence(ts): ts
        case let .languages(replies): replies.flatMap(\.reply.texts)
        }
    }
}

/// The reply for one language of a `reply: {en: …, es: …}`.
public struct LanguageReply: Sendable, Hashable {
    /// An ISO 639 code, as bot.yaml's `language` writes them.
    public var language: String
    /// A text, variants or a sequence.
    public var reply: Reply

    public init(language: String, reply: Reply) {
        self.language = language
        self.reply = reply
    }
}

/// `handoff: {reason, queue, priority, message}`; missing fields take the bot's defaults.
public struct Handoff: Sendable, Hashable {
    public var reason: String
    public var queue: String?
    public var priority: HandoffPriority?
    /// Overrides the bot's `handoff.system_message`.
    public var message: Template?

    public init(reason: String, queue: String? = nil, priority: HandoffPriority? = nil, message: Template? = nil) {
        self.reason = reason
        self.queue = queue
        self.priority = priority
        self.message = message
    }
}

/// How urgently agents should pick up a handed-off conversation.
public enum HandoffPriority: String, Sendable, Hashable, CaseIterable {
    case low, normal, high, urgent
}

/// One `set: {key: value}` entry.
public struct MetadataEntry: Sendable, Hashable {
    public var key: String
    public var value: Template
}
