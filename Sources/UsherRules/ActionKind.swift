/// One action of `then` / `fallback`: its YAML key, the shape of its value, and what it does, in
/// one line for the docs and in a sentence for editors.
///
/// `ActionKind.all` is the one list of the rule language's actions. The compiler looks keys up
/// in it and compiles each value by its `Value` shape (`RuleCompiler.compileActionValue`); the
/// JSON schema (`JSONSchema.ruleFile`) and the actions table of docs/DESIGN.md are generated from
/// it (tests check `schema/rules.schema.json` and the table).
package struct ActionKind: Sendable {
    /// The YAML key, snake_case.
    package let key: String
    /// What the value looks like, which decides how it compiles and its schema.
    package let value: Value
    /// What the action does, one line of Markdown for the docs' table.
    package let summary: String
    /// The schema's `description`, shown by editors: plain sentences.
    package let description: String

    /// The shapes an action's value can take. A new shape needs a case here, its schema and
    /// forms below, and its compilation in `RuleCompiler.compileActionValue` (an exhaustive
    /// switch, so the Swift compiler points at it).
    package enum Value: Sendable {
        /// A text, a list of texts (variants), `{sequence: [...]}` or `{text, quick_replies}`, or
        /// one of those per language.
        case reply
        /// A customer-facing text, or one per language, made into the action by the function.
        case notice(@Sendable (LocalizedTemplate) -> Action)
        /// `{reason, queue, priority, message}`, each optional, or nothing.
        case handoff
        /// A tag name, made into the action by the function.
        case tagName(@Sendable (String) -> Action)
        /// A text, or `{text, queue}`.
        case notify
        /// A mapping of metadata keys to templates.
        case metadata
    }
}

extension ActionKind {
    /// Every action, in the order diagnostics, the schema and the docs list them.
    package static let all: [ActionKind] = [
        ActionKind(key: "reply", value: .reply,
                   summary: "a bot message; a list rotates deterministically per conversation; a sequence picks by how many times this rule has fired in the session; `quick_replies` adds buttons and links",
                   description: "Send a message as the bot. A text; or a list of texts, used in turn (each conversation gets a fixed rotation, so replies do not repeat back to back); or {sequence: [...]}, where the first time this rule fires in a session sends the first text, the second time the second, and so on. Add buttons and links with {text: ..., quick_replies: [Track my order, {title: Returns, url: \"https://...\"}]} (or {sequence: [...], quick_replies: [...]}). Or one of those per language, {en: ..., es: ...}: the conversation's locale chooses, else the language of the customer's message, else the language the conversation was last seen in, else the bot's first language."),
        ActionKind(key: "system", value: .notice({ .system($0) }),
                   summary: "a system notice (sender type `system`), in the customer's language when written per language",
                   description: "Write a system notice into the conversation (shown to the customer as a notice, not as the bot speaking). A text, or one per language, {en: ..., es: ...}, chosen as a reply's language is."),
        ActionKind(key: "handoff", value: .handoff,
                   summary: "writes the system message (default from the bot file), sets the conversation's owner to \"waiting for agent\" (the seed's `isAssignedToAgent = true`), raises an agent notification",
                   description: "Hand the conversation to a human agent: write the handoff system message, mark the conversation as waiting for an agent, and (if the bot says so) notify agents. After a handoff the bot stays silent except for rules with while_waiting: true. Write {reason: ..., queue: ...}, or nothing after the colon for all defaults."),
        ActionKind(key: "tag", value: .tagName({ .tag($0) }),
                   summary: "adds a tag to the conversation; it stays across sessions",
                   description: "Add a tag to the conversation."),
        ActionKind(key: "untag", value: .tagName({ .untag($0) }),
                   summary: "removes a tag from the conversation",
                   description: "Remove a tag from the conversation."),
        ActionKind(key: "notify", value: .notify,
                   summary: "an agent notification without a handoff",
                   description: "Notify agents without handing off; the bot keeps the conversation. A text, or {text, queue}."),
        ActionKind(key: "set", value: .metadata,
                   summary: "conversation metadata, readable as `{{metadata.KEY}}`",
                   description: "Set conversation metadata (shown to agents and kept with the conversation; replies can read it back as {{metadata.KEY}}). Example: {topic: refund}."),
    ]

    /// The keys of `all`, in order.
    package static let keys: [String] = all.map(\.key)

    /// `all` by key.
    package static let byKey: [String: ActionKind] = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })

    /// The action's entry under `action.properties` in the rule-file schema.
    package var schema: JSONSchema {
        value.schema.described(description)
    }
}

extension ActionKind.Value {
    /// The schema of the value (without its description).
    package var schema: JSONSchema {
        switch self {
        case .reply:
            ["anyOf": [JSONSchema.reference("template"), JSONSchema.list(of: JSONSchema.reference("template")),
                       JSONSchema.replyMessage, JSONSchema.replyLanguages]]
        case .notice: JSONSchema.allOf("notice")
        case .handoff: JSONSchema.handoffFields
        case .tagName: JSONSchema.allOf("tagName")
        case .notify: ["anyOf": [JSONSchema.reference("template"), JSONSchema.notifyFields]]
        case .metadata: JSONSchema.metadata
        }
    }

    /// How the value is written, for the docs' table (Markdown).
    package var forms: String {
        switch self {
        case .reply: "`TEXT`, `[TEXT, …]`, `{sequence: [TEXT, …]}`, `{text: TEXT, quick_replies: [BUTTON, {title, url}, …]}`, or `{en: …, es: …}` with one of those per language"
        case .notice: "`TEXT`, or `{en: TEXT, es: TEXT}`"
        case .handoff: "`\(JSONSchema.handoffFields.propertyNames.braced)`, each optional, or nothing"
        case .tagName: "`NAME`"
        case .notify: "`TEXT` or `\(JSONSchema.notifyFields.propertyNames.braced)`"
        case .metadata: "`{key: TEXT, …}`"
        }
    }
}
