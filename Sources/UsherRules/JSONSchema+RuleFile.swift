// The schema of rule files. Conditions and actions come from `ConditionKind.all` and
// `ActionKind.all`; the rule options and the file's top level are declared here, and the
// compiler takes its lists of allowed keys from them (`RuleCompiler.fileKeys`, `ruleKeys`).

extension JSONSchema {
    /// The JSON Schema of rule files (`rules/*.yaml`, `bots/<bot>/rules.yaml`): the text of
    /// `schema/rules.schema.json`.
    public static let ruleFile: JSONSchema = [
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Usher rule file",
        "description": "A file of auto-reply rules for Usher (rules/*.yaml or bots/<bot>/rules.yaml). Rules are tried from the highest priority down; the first that matches acts, unless it says continue: true.",
        "type": "object",
        "additionalProperties": false,
        "required": ["version"],
        "properties": [
            "version": [
                "const": 1,
                "description": "The rule-file format version. Always 1.",
            ],
            "lists": [
                "type": "object",
                "description": "Named keyword lists, used in keywords as $name. A list can be used by every rule file of the bot, and each name may be defined only once per bot. Example: human: [human, agent, \"real person\", 人工].",
                "propertyNames": reference("listName"),
                "additionalProperties": [
                    "type": "array",
                    "minItems": 1,
                    "description": "Words or phrases.",
                    "items": [
                        "anyOf": [
                            [
                                "type": ["string", "integer"],
                                "minLength": 1,
                                "pattern": "^[^$]",
                                "description": "A word or phrase (a list cannot contain another $list).",
                            ],
                            exactKeyword,
                        ],
                    ],
                ],
            ],
            "rules": [
                "type": "array",
                "description": "The rules. Order matters only between rules with the same priority.",
                "items": reference("rule"),
            ],
            "fallback": [
                "description": "What to do when no rule matched the customer's message. At most one rule file per bot may have a fallback.",
                "allOf": [reference("actions")],
            ],
        ],
        "definitions": ruleFileDefinitions,
    ]

    private static let ruleFileDefinitions: JSONSchema = [
        "duration": duration,
        "template": [
            "type": "string",
            "minLength": 1,
            "description": "Text, with optional placeholders: {{name}} for a named group (?<name>...) of this rule's regex; {{customer.name}}, {{customer.id}}; {{conversation.id}}, {{conversation.customer_messages}}, {{conversation.bot_replies}}, {{conversation.channel}}, {{conversation.locale}}; {{bot.name}}, {{bot.id}}; {{metadata.KEY}} for a value written by a `set` action. Write {{name|fallback text}} when the value may be missing, for example {{customer.name|there}}. Placeholders only substitute text: no code, no loops.",
        ],
        "notice": [
            "description": "A text the customer sees, or one per language: ISO 639 codes (en, es, zh) as keys, each with a text. The language is chosen as a reply's is: the conversation's locale, else the language of the customer's message, else the language the conversation was last seen in, else the bot's first language.",
            "anyOf": [reference("template"), perLanguage(reference("template"))],
        ],
        "quickReply": [
            "description": "A button: its text, which the customer's chat sends back as a message when pressed (Track my order). Or a link: {title: Returns policy, url: \"https://shop.example/returns\"}, which opens the address.",
            "anyOf": [reference("template"), quickReplyLink],
        ],
        "listName": [
            "type": "string",
            "pattern": "^[a-z0-9][a-z0-9_-]*$",
            "description": "The name of a keyword list: lowercase letters, digits, '_' and '-', starting with a letter or digit.",
        ],
        "keyword": [
            "type": ["string", "integer"],
            "minLength": 1,
            "pattern": "^(?:[^$]|\\$[a-z0-9][a-z0-9_-]*$)",
            "description": "A word or phrase (\"refund\", \"money back\", \"退款\"), or $name to use a list defined under `lists` in any rule file of the bot. Matching ignores case, extra spaces and invisible characters; a keyword without accents matches with or without them, a keyword with an accent matches only the accented spelling. Words match whole words; Chinese, Japanese and Thai match anywhere in the text. A number such as 12315 is a keyword too.",
            "examples": ["refund", "money back", "$human"],
        ],
        "keywordSet": [
            "description": "One keyword or $list, or a list of them.",
            "anyOf": [reference("keyword"), list(of: ["anyOf": [reference("keyword"), exactKeyword]])],
        ],
        "keywords": [
            "description": "Keywords to look for in the customer's message. A list (or a single keyword) means: any of these. Use {any, all, none} for more control, for example {any: $human, none: [\"delivery agent\"]}.",
            "anyOf": [reference("keywordSet"), keywordGroups],
        ],
        "pattern": [
            "type": "string",
            "minLength": 1,
            "description": "A regular expression (PCRE2, Unicode-aware) matched against the original text. Write it in single quotes in YAML so backslashes stay as they are: '\\bcharge\\s?back\\b'. A named group (?<order>...) becomes the placeholder {{order}} in this rule's replies.",
            "examples": ["\\bcharge\\s?back\\b", "(?<order>\\b\\d{3}-\\d{7}-\\d{7}\\b)"],
        ],
        "regex": [
            "description": "A regular expression, or a list of them (the condition holds when any of them matches).",
            "anyOf": [reference("pattern"), list(of: reference("pattern"))],
        ],
        "count": [
            "description": "A number of messages: an exact number (4), or {at_least: 4}, {at_most: 3}, both together, or {between: [2, 5]} (both ends included).",
            "anyOf": [["type": "integer", "minimum": 0, "description": "Exactly this many."], countBounds],
        ],
        "timeRange": [
            "description": "A duration (meaning: at least this long), or {at_least: DURATION, at_most: DURATION}.",
            "anyOf": [reference("duration"), timeBounds],
        ],
        "tagName": [
            "type": "string",
            "minLength": 1,
            "description": "A conversation tag, for example has-order or vip. Tags stay on the conversation across sessions until a rule removes them with `untag`.",
        ],
        "tagSet": [
            "description": "One tag, or a list of tags.",
            "anyOf": [reference("tagName"), list(of: reference("tagName"))],
        ],
        "condition": [
            "type": "object",
            "description": "Conditions on the incoming customer message and its conversation. Every key in one mapping must hold (AND); use any, all and not to combine differently.",
            "additionalProperties": false,
            "minProperties": 1,
            "properties": .object(ConditionKind.all.map { Member(key: $0.key, value: $0.schema) }),
        ],
        "action": [
            "type": "object",
            "description": .string("One action, written as a single key: \(ActionKind.keys.spoken)."),
            "additionalProperties": false,
            "minProperties": 1,
            "maxProperties": 1,
            "properties": .object(ActionKind.all.map { Member(key: $0.key, value: $0.schema) }),
        ],
        "actions": [
            "description": .string("Actions, carried out in order: a list whose items are each one action (\(ActionKind.keys.spoken)). A single action may also be written without the list."),
            "anyOf": [list(of: reference("action")), reference("action")],
        ],
        "rule": rule,
    ]

    /// One rule: its options, `when`, `unless` and `then`.
    package static let rule: JSONSchema = [
        "type": "object",
        "description": "One rule: when its conditions hold, its actions run.",
        "additionalProperties": false,
        "required": ["id", "then"],
        "properties": [
            "id": [
                "type": "string",
                "pattern": "^[a-z0-9][a-z0-9_-]*$",
                "description": "The rule's name, unique within the bot (across all its rule files): lowercase letters, digits, '-' and '_'. It appears in logs, reports, tests and `usher explain`.",
            ],
            "description": [
                "type": "string",
                "description": "What the rule is for, in plain words. Shown by `usher explain`.",
            ],
            "priority": [
                "type": "integer",
                "default": 0,
                "minimum": -1_000_000,
                "maximum": 1_000_000,
                "description": "Higher runs first (default 0). Rules with the same priority keep the order of bot.yaml's `rules` list, then their order in the file.",
            ],
            "continue": [
                "type": "boolean",
                "default": false,
                "description": "false (default): when this rule fires, no later rule is tried. true: later rules are tried too, so several rules can act on one message.",
            ],
            "once": [
                "type": "boolean",
                "default": false,
                "description": "true: fire at most once per session.",
            ],
            "cooldown": [
                "description": .string("After firing, skip this rule for this long in the same conversation. " + durationHelp),
                "allOf": [reference("duration")],
            ],
            "enabled": [
                "type": "boolean",
                "default": true,
                "description": "false switches the rule off without deleting it.",
            ],
            "exact": [
                "type": "boolean",
                "default": false,
                "description": "true: this rule's keywords match only as written, even when bot.yaml turns on matching.word_forms or matching.typos.",
            ],
            "while_waiting": [
                "type": "boolean",
                "default": false,
                "description": "true: this rule may also speak while the conversation waits for an agent after a handoff (for example \"An agent will be with you shortly.\"). While waiting, only such rules run. Give them a cooldown.",
            ],
            "when": [
                "description": "The conditions under which the rule fires. Every key must hold. Without `when` the rule matches every message.",
                "allOf": [reference("condition")],
            ],
            "unless": [
                "description": "The rule does not fire when these conditions hold, even if `when` does.",
                "allOf": [reference("condition")],
            ],
            "then": [
                "description": "What to do when the rule fires, in order.",
                "allOf": [reference("actions")],
            ],
        ],
    ]

    // MARK: Shapes shared by several keys; the compiler takes the keys of their mappings from
    // these (`propertyNames`), so a key is named once.

    /// `{exact: WORD}`: a keyword that matches only as written.
    package static let exactKeyword: JSONSchema = [
        "type": "object",
        "additionalProperties": false,
        "required": ["exact"],
        "properties": [
            "exact": [
                "type": ["string", "integer"],
                "minLength": 1,
                "description": "A word or phrase (or $list) that matches only as written, even when bot.yaml turns on matching.word_forms or matching.typos: {exact: card} does not match cards or cart.",
            ],
        ],
    ]

    /// `{any, all, none}` of keywords.
    package static let keywordGroups: JSONSchema = groups(of: "keywordSet", [
        "At least one of these keywords must appear.",
        "Every one of these keywords must appear.",
        "None of these keywords may appear.",
    ])

    /// `{any, all, none}` of tags.
    package static let tagGroups: JSONSchema = groups(of: "tagSet", [
        "The conversation has at least one of these tags.",
        "The conversation has every one of these tags.",
        "The conversation has none of these tags.",
    ])

    private static func groups(of set: String, _ descriptions: [String]) -> JSONSchema {
        let members = zip(["any", "all", "none"], descriptions).map { key, description in
            Member(key: key, value: ["description": .string(description), "allOf": [reference(set)]])
        }
        return ["type": "object", "additionalProperties": false, "minProperties": 1, "properties": .object(members)]
    }

    /// `{at_least, at_most}` or `{between: [a, b]}` of a count.
    package static let countBounds: JSONSchema = [
        "type": "object",
        "additionalProperties": false,
        "minProperties": 1,
        "dependencies": [
            "between": [
                "description": "between cannot be combined with at_least or at_most.",
                "properties": ["at_least": false, "at_most": false],
            ],
        ],
        "properties": [
            "at_least": ["type": "integer", "minimum": 0, "description": "This many or more."],
            "at_most": ["type": "integer", "minimum": 0, "description": "This many or fewer."],
            "between": [
                "type": "array",
                "items": ["type": "integer", "minimum": 0],
                "minItems": 2,
                "maxItems": 2,
                "description": "[low, high]: from low to high, both included. Example: [2, 5].",
            ],
        ],
    ]

    /// `{at_least, at_most}` of a time range.
    package static let timeBounds: JSONSchema = [
        "type": "object",
        "additionalProperties": false,
        "minProperties": 1,
        "properties": [
            "at_least": ["description": "At least this long.", "allOf": [reference("duration")]],
            "at_most": ["description": "At most this long.", "allOf": [reference("duration")]],
        ],
    ]

    /// `reply: {text, sequence, quick_replies}`: a reply written as a mapping, for a sequence
    /// or for quick replies.
    package static let replyMessage: JSONSchema = [
        "type": "object",
        "additionalProperties": false,
        "oneOf": [["required": ["text"]], ["required": ["sequence"]]],
        "properties": [
            "text": [
                "description": "The text: one, or a list of texts used in turn (each conversation gets a fixed rotation).",
                "anyOf": [reference("template"), list(of: reference("template"))],
            ],
            "sequence": [
                "type": "array",
                "minItems": 1,
                "items": reference("template"),
                "description": "The nth time this rule fires in a session, it sends the nth text.",
            ],
            "quick_replies": [
                "type": "array",
                "minItems": 1,
                "items": reference("quickReply"),
                "description": "Buttons and links shown with the reply, in order: [Track my order, Talk to a human, {title: Returns policy, url: \"https://shop.example/returns\"}]. A button sends its text back as the customer's message; a link opens its address.",
            ],
        ],
    ]

    /// A link of `quick_replies`: `{title, url}` (a button written long without `url`).
    package static let quickReplyLink: JSONSchema = [
        "type": "object",
        "additionalProperties": false,
        "required": ["title"],
        "properties": [
            "title": ["description": "What the button or link says.", "allOf": [reference("template")]],
            "url": [
                "type": "string",
                "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#{}]+([/?#][^\\s]*)?$",
                "description": "The web address the link opens: https:// (or http://) and a host written out; placeholders such as {{order}} may stand in the path or query, and their values are percent-encoded.",
                "examples": ["https://shop.example/returns", "https://shop.example/track/{{order}}"],
            ],
        ],
    ]

    /// `reply: {en: …, es: …}`: a reply per language.
    package static let replyLanguages: JSONSchema = [
        "type": "object",
        "minProperties": 1,
        "description": "A reply per language: ISO 639 codes (en, es, zh) as keys, each with a text, a list of texts, {sequence: [...]} or {text: ..., quick_replies: [...]}. The conversation's locale chooses; without one, the language of the customer's message (among the bot's languages in bot.yaml), else the language the conversation was last seen in, else the bot's first language.",
        "propertyNames": ["pattern": "^[a-z]{2,3}$"],
        "additionalProperties": [
            "anyOf": [reference("template"), list(of: reference("template")), replyMessage],
        ],
    ]

    /// `handoff: {reason, queue, priority, message}`, or nothing.
    package static let handoffFields: JSONSchema = [
        "type": ["object", "null"],
        "additionalProperties": false,
        "properties": [
            "reason": [
                "type": "string",
                "minLength": 1,
                "description": "Why the bot handed off, for agents, reports and metrics; short, like asked-for-human or threshold. Default: the rule's id.",
                "examples": ["asked-for-human", "threshold"],
            ],
            "queue": [
                "type": "string",
                "minLength": 1,
                "description": "The agent queue to hand off to. Default: handoff.queue in bot.yaml.",
            ],
            "priority": [
                "type": "string",
                "enum": .array(HandoffPriority.allCases.map { .string($0.rawValue) }),
                "default": .string(HandoffPriority.normal.rawValue),
                "description": .string("How urgent the handoff is for agents: \(HandoffPriority.allCases.map(\.rawValue).spoken(defaultValue: HandoffPriority.normal.rawValue))."),
            ],
            "message": [
                "description": "The system message the customer sees: a text, or one per language ({en: ..., es: ...}). Default: handoff.system_message in bot.yaml.",
                "allOf": [reference("notice")],
            ],
        ],
    ]

    /// `notify: {text, queue}`.
    package static let notifyFields: JSONSchema = [
        "type": "object",
        "additionalProperties": false,
        "required": ["text"],
        "properties": [
            "text": ["description": "What the agents are told.", "allOf": [reference("template")]],
            "queue": [
                "type": "string",
                "minLength": 1,
                "description": "The agent queue to notify. Default: handoff.queue in bot.yaml.",
            ],
        ],
    ]

    /// `set: {key: value, ...}`.
    package static let metadata: JSONSchema = [
        "type": "object",
        "minProperties": 1,
        "propertyNames": ["pattern": "^[A-Za-z_][A-Za-z0-9_.-]*$"],
        "additionalProperties": [
            "type": ["string", "number", "boolean"],
            "description": "The value: text (placeholders allowed), a number, or true/false.",
        ],
    ]

    // MARK: Building blocks

    /// A duration such as `30s` or `1h30m` (both schemas define it).
    static let duration: JSONSchema = [
        "type": "string",
        "pattern": "^([0-9]+(s|m|h|d|w))+$",
        "description": .string(durationHelp),
        "examples": ["30s", "10m", "2h", "1d", "1h30m"],
    ]

    /// How durations are written; every description of a duration ends with it.
    static let durationHelp = "A number followed by s (seconds), m (minutes), h (hours), d (days) or w (weeks), with no space: 30s, 10m, 2h, 1d; parts can be combined, as in 1h30m."

    /// `{"$ref": "#/definitions/NAME"}`.
    static func reference(_ name: String) -> JSONSchema { ["$ref": .string("#/definitions/" + name)] }

    /// `{"allOf": [{"$ref": "#/definitions/NAME"}]}`: a reference that a `description` can sit
    /// beside (draft-07 ignores the siblings of a bare `$ref`).
    static func allOf(_ name: String) -> JSONSchema { ["allOf": [reference(name)]] }

    /// `{en: TEXT, es: TEXT}`: a text per language code.
    static func perLanguage(_ text: JSONSchema) -> JSONSchema {
        ["type": "object", "minProperties": 1, "propertyNames": ["pattern": "^[a-z]{2,3}$"], "additionalProperties": text]
    }

    /// A non-empty list of `item`.
    static func list(of item: JSONSchema) -> JSONSchema { ["type": "array", "minItems": 1, "items": item] }
}

extension [String] {
    /// `{a, b, c}`: the keys of a mapping, as the docs write them.
    var braced: String { "{" + joined(separator: ", ") + "}" }

    /// `a, b or c`: keys in a sentence.
    var spoken: String { spoken(defaultValue: nil) }

    /// `a, b (the default) or c` when one of them is the default.
    func spoken(defaultValue: String?) -> String {
        let words = map { $0 == defaultValue ? $0 + " (the default)" : $0 }
        guard words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + words.last!
    }
}
