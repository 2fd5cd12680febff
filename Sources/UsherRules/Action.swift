
/// What a rule does when it fires (`then`, `fallback`).
public enum Action: Sendable, Hashable {
    case reply(Reply)
    case system(LocalizedTemplate)
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
        case let .reply(r): r.templates
        case let .system(t): t.templates
        case let .handoff(h): h.message?.templates ?? []
        case let .notify(t, _): [t]
        case let .set(entries): entries.map(\.value)
        case .tag, .untag: []
        }
    }
}

/// `reply`: what the bot says, and the buttons and links offered with it.
public struct Reply: Sendable, Hashable {
    /// The forms of a reply's text.
    public indirect enum Form: Sendable, Hashable {
        /// One text.
        case text(Template)
        /// `[a, b, c]`: rotates deterministically per conversation.
        case variants([Template])
        /// `{sequence: […]}`: the nth firing in a session gets the nth text (the last repeats).
        case sequence([Template])
        /// `{en: …, es: …}`: a reply per language, in the file's order; the engine answers in
        /// the customer's language (`Decision.language`).
        case languages([LanguageReply])
    }

    public var form: Form
    /// `quick_replies`: the buttons and links shown with the text, in order. Empty for
    /// `.languages`: each language's reply carries its own.
    public var quickReplies: [QuickReplyTemplate]

    public init(_ form: Form, quickReplies: [QuickReplyTemplate] = []) {
        self.form = form
        self.quickReplies = quickReplies
    }

    /// Every text the reply may send (of every language).
    public var texts: [Template] {
        switch form {
        case let .text(t): [t]
        case let .variants(ts), let .sequence(ts): ts
        case let .languages(replies): replies.flatMap(\.reply.texts)
        }
    }

    /// Every template of the reply: its texts, and its quick replies' titles and links.
    public var templates: [Template] {
        switch form {
        case let .languages(replies): replies.flatMap(\.reply.templates)
        default: texts + quickReplies.flatMap { [$0.title] + ($0.url.map { [$0] } ?? []) }
        }
    }
}

/// The reply for one language of a `reply: {en: …, es: …}`.
public struct LanguageReply: Sendable, Hashable {
    /// An ISO 639 code, as bot.yaml's `language` writes them.
    public var language: String
    /// A text, variants or a sequence, with this language's quick replies.
    public var reply: Reply

    public init(language: String, reply: Reply) {
        self.language = language
        self.reply = reply
    }
}

/// One item of `quick_replies`: a button (`Track my order`), which the customer's chat sends
/// back as a message of its title, or a link (`{title: Returns, url: https://…}`), which opens
/// the address. Both may use template variables; a link's variables are percent-encoded when
/// rendered, and its scheme and host are fixed text (checked at load).
public struct QuickReplyTemplate: Sendable, Hashable {
    public var title: Template
    /// The address of a link; nil for a button.
    public var url: Template?

    public init(title: Template, url: Template? = nil) {
        self.title = title
        self.url = url
    }
}

/// `handoff: {reason, queue, priority, message}`; missing fields take the bot's defaults.
public struct Handoff: Sendable, Hashable {
    public var reason: String
    public var queue: String?
    public var priority: HandoffPriority?
    /// Overrides the bot's `handoff.system_message`.
    public var message: LocalizedTemplate?

    public init(reason: String, queue: String? = nil, priority: HandoffPriority? = nil, message: LocalizedTemplate? = nil) {
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
