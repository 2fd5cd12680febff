/// One key of a `when` / `unless` condition: its YAML name, the shape of its value, and what it
/// means, in one line for the docs and in a sentence for editors.
///
/// `ConditionKind.all` is the one list of the rule language's conditions. The compiler looks keys
/// up in it and compiles each value by its `Value` shape (`RuleCompiler.compileConditionValue`);
/// the JSON schema (`JSONSchema.ruleFile`) and the conditions table of docs/DESIGN.md are
/// generated from it (tests check `schema/rules.schema.json` and the table).
package struct ConditionKind: Sendable {
    /// The YAML key, snake_case.
    package let key: String
    /// What the value looks like, which decides how it compiles and its schema.
    package let value: Value
    /// What the condition holds on, one line of Markdown for the docs' table.
    package let summary: String
    /// The schema's `description`, shown by editors: plain sentences.
    package let description: String

    /// The shapes a condition's value can take. A new shape needs a case here, its schema and
    /// forms below, and its compilation in `RuleCompiler.compileConditionValue` (an exhaustive
    /// switch, so the Swift compiler points at it).
    package enum Value: Sendable {
        /// Words, phrases and `$list`s, or `{any, all, none}` of them.
        case keywords
        /// A PCRE2 pattern or a list of them (any of); named groups become template variables.
        case patterns
        /// A count: `N`, `{at_least, at_most}` or `{between: [a, b]}`.
        case count(@Sendable (CountRange) -> Condition)
        /// A duration (at least this long) or `{at_least, at_most}`.
        case timeRange(@Sendable (TimeRange) -> Condition)
        /// The name of one of the bot's schedules: inside it (`true`) or outside it.
        case schedule(inside: Bool)
        /// Tags, or `{any, all, none}` of them.
        case tags
        /// A glob over a field of the conversation.
        case glob(@Sendable (Glob) -> Condition)
        /// A list of conditions, combined by the function (`any`, `all`).
        case conditions(@Sendable ([Condition]) -> Condition)
        /// A condition that must not hold.
        case negated
    }
}

extension ConditionKind {
    /// Every condition, in the order diagnostics, the schema and the docs list them.
    package static let all: [ConditionKind] = [
        ConditionKind(key: "keywords", value: .keywords,
                      summary: "the customer's message contains these keywords",
                      description: "Holds when the customer's message contains these keywords. A list means any of them; use {any, all, none} to combine. Items are words, phrases or $list names."),
        ConditionKind(key: "regex", value: .patterns,
                      summary: "a regular expression matches the message; named groups become template variables",
                      description: "Holds when the regular expression (or any of a list) matches the customer's message. Named groups (?<name>...) become placeholders {{name}} for this rule's replies."),
        ConditionKind(key: "customer_messages", value: .count({ .customerMessages($0) }),
                      summary: "customer messages in this session, including this one",
                      description: "How many messages the customer has sent in this session, counting the current one. Every customer message counts, whichever rule answered it. Example: {at_most: 3} for the first three messages."),
        ConditionKind(key: "bot_replies", value: .count({ .botReplies($0) }),
                      summary: "replies the bot has sent in this session, before this message",
                      description: "How many replies the bot has sent in this session (before this message)."),
        ConditionKind(key: "fallbacks_in_a_row", value: .count({ .fallbacksInARow($0) }),
                      summary: "consecutive messages, just before this one, that fell through to `fallback`",
                      description: "How many messages in a row, just before this one, got the fallback reply because no rule matched. Example: {at_least: 2} to hand off after the bot failed to understand twice."),
        ConditionKind(key: "idle_for", value: .timeRange({ .idleFor($0) }),
                      summary: "time since the previous message of the conversation, from anyone",
                      description: "Holds when the conversation had been silent at least this long before this message (or within {at_least, at_most})."),
        ConditionKind(key: "session_age", value: .timeRange({ .sessionAge($0) }),
                      summary: "time since the session's first message",
                      description: "Holds when the session started at least this long ago (or within {at_least, at_most})."),
        ConditionKind(key: "during", value: .schedule(inside: true),
                      summary: "the message arrives inside this schedule, in the bot's time zone",
                      description: "Holds when the message arrives inside this schedule (a name under `schedules` in bot.yaml), in the bot's time zone. Example: business_hours."),
        ConditionKind(key: "outside", value: .schedule(inside: false),
                      summary: "the message arrives outside this schedule, including its `except` dates",
                      description: "Holds when the message arrives outside this schedule (a name under `schedules` in bot.yaml), including its `except` dates. Example: business_hours."),
        ConditionKind(key: "tags", value: .tags,
                      summary: "the conversation's tags (set by `tag` actions)",
                      description: "Conditions on the conversation's tags (set by `tag` actions). A tag or a list means: any of these; use {any, all, none} for more control."),
        ConditionKind(key: "channel", value: .glob({ .channel($0) }),
                      summary: "the conversation's channel matches (`web`, `app-*`)",
                      description: "Holds when the conversation's channel matches this pattern; * matches anything. Examples: web, app-*."),
        ConditionKind(key: "locale", value: .glob({ .locale($0) }),
                      summary: "the conversation's locale matches (`en`, `zh-*`)",
                      description: "Holds when the conversation's locale matches this pattern; * matches anything. Examples: en, zh-*."),
        ConditionKind(key: "any", value: .conditions({ .any($0) }),
                      summary: "at least one of the conditions holds",
                      description: "A list of conditions; holds when at least one of them holds."),
        ConditionKind(key: "all", value: .conditions({ .all($0) }),
                      summary: "every one of the conditions holds",
                      description: "A list of conditions; holds when every one of them holds."),
        ConditionKind(key: "not", value: .negated,
                      summary: "the condition does not hold",
                      description: "A condition that must NOT hold."),
    ]

    /// The keys of `all`, in order.
    package static let keys: [String] = all.map(\.key)

    /// `all` by key.
    package static let byKey: [String: ConditionKind] = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })

    /// The condition's entry under `condition.properties` in the rule-file schema.
    package var schema: JSONSchema {
        value.schema.described(value.describing(description))
    }
}

extension ConditionKind.Value {
    /// The schema of the value (without its description).
    package var schema: JSONSchema {
        switch self {
        case .keywords: JSONSchema.allOf("keywords")
        case .patterns: JSONSchema.allOf("regex")
        case .count: JSONSchema.allOf("count")
        case .timeRange: JSONSchema.allOf("timeRange")
        case .schedule, .glob: ["type": "string", "minLength": 1]
        case .tags: ["anyOf": [JSONSchema.reference("tagSet"), JSONSchema.tagGroups]]
        case .conditions: JSONSchema.list(of: JSONSchema.reference("condition"))
        case .negated: JSONSchema.allOf("condition")
        }
    }

    /// A condition's description as editors show it: a duration's forms are spelt out.
    func describing(_ description: String) -> String {
        if case .timeRange = self { description + " " + JSONSchema.durationHelp } else { description }
    }

    /// How the value is written, for the docs' table (Markdown).
    package var forms: String {
        switch self {
        case .keywords: "words, phrases or `$list`s (any of), or `\(JSONSchema.keywordGroups.propertyNames.braced)`"
        case .patterns: "a PCRE2 pattern, or a list of them (any of)"
        case .count: "`N`, `{at_least: N}`, `{at_most: N}`, both, or `{between: [a, b]}`"
        case .timeRange: "a duration (`30s`, `10m`, `2h`, `1d`: at least this long), or `{at_least, at_most}`"
        case .schedule: "a schedule name from the bot file"
        case .tags: "tags (any of), or `\(JSONSchema.tagGroups.propertyNames.braced)`"
        case .glob: "a glob (`*`, `?`), case-insensitive"
        case .conditions: "a list of conditions"
        case .negated: "a condition"
        }
    }
}
