/// A customer-facing notice written once, or once per language (`{en: …, es: …}`): bot.yaml's
/// `handoff.system_message` and `limits.loop_guard.message`, a `system` action, a handoff's
/// `message`. The engine picks the language as it does for a reply written per language
/// (`Decision.language`).
public enum LocalizedTemplate: Sendable, Hashable {
    /// One text for every conversation.
    case text(Template)
    /// One text per language, in the file's order.
    case languages([LanguageTemplate])

    /// Every text (of every language).
    public var templates: [Template] {
        switch self {
        case let .text(t): [t]
        case let .languages(texts): texts.map(\.template)
        }
    }
}

/// The text for one language of a `{en: …, es: …}` notice.
public struct LanguageTemplate: Sendable, Hashable {
    /// An ISO 639 code, as bot.yaml's `language` writes them.
    public var language: String
    public var template: Template

    public init(language: String, template: Template) {
        self.language = language
        self.template = template
    }
}
