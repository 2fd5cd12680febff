// The schema of bot files. `BotFileParser` takes its lists of allowed keys from it
// (`propertyNames` of the file and of its sections), so a key is named once.

extension JSONSchema {
    /// The JSON Schema of bot files (`bots/<bot>/bot.yaml`): the text of `schema/bot.schema.json`.
    public static let botFile: JSONSchema = [
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Usher bot file",
        "description": "One bot (bots/<bot>/bot.yaml): who it writes as, which rule files it uses, its schedules, limits and handoff defaults.",
        "type": "object",
        "additionalProperties": false,
        "required": ["bot", "rules"],
        "properties": [
            "bot": [
                "type": "string",
                "pattern": "^[a-z0-9][a-z0-9-]*$",
                "description": "The bot's id: lowercase letters, digits and '-'. Usually the folder name, e.g. support.",
            ],
            "name": [
                "type": "string",
                "minLength": 1,
                "description": "The sender name on everything the bot writes, and {{bot.name}} in replies. Default: the bot id.",
            ],
            "sender_id": [
                "type": "string",
                "minLength": 1,
                "description": "The sender id on everything the bot writes. The bot never reacts to messages with this sender id. Default: bot:<bot id>, for example bot:support.",
            ],
            "description": [
                "type": "string",
                "description": "What this bot is for, in plain words.",
            ],
            "timezone": [
                "type": "string",
                "pattern": "^(UTC|GMT|[A-Za-z_]+(/[A-Za-z0-9_+-]+)+)$",
                "description": "The IANA time zone in which schedules are read, for example Asia/Shanghai or Europe/Madrid. Default: UTC.",
                "examples": ["Asia/Shanghai", "Europe/Madrid", "UTC"],
            ],
            "rules": [
                "type": "array",
                "minItems": 1,
                "description": "The rule files this bot uses, relative to this file; * globs allowed. Order matters: between rules of equal priority, earlier files come first. A rule id may appear only once across all of them.",
                "items": [
                    "type": "string",
                    "minLength": 1,
                    "description": "A path such as rules.yaml or ../../rules/handoff.yaml.",
                ],
            ],
            "schedules": [
                "type": "object",
                "description": "Named opening-hours schedules, used by rules as during: NAME or outside: NAME.",
                "additionalProperties": reference("schedule"),
            ],
            "session": botSession,
            "limits": botLimits,
            "channels": [
                "description": "When several bots share one store (usher run BOT BOT …): the conversations this bot answers, as globs over the conversation's channel, for example [web, app-*]. Leave it out on the one bot that answers every conversation no other bot claims.",
                "type": "array",
                "items": ["type": "string", "minLength": 1],
                "minItems": 1,
            ],
            "handoff": botHandoff,
            "language": [
                "description": "The language your customers write in, as an ISO 639 code (en, es, zh), or a list of them, the main one first: [en, es]. Keywords match other forms of their words in these languages (matching.word_forms), typos are checked against their dictionaries (matching.typos), and a reply written per language answers in the customer's. Default: none declared.",
                "anyOf": [reference("languageCode"), list(of: reference("languageCode"))],
            ],
            "matching": botMatching,
        ],
        "definitions": [
            "duration": duration,
            "languageCode": [
                "type": "string",
                "pattern": "^[a-z]{2,3}$",
                "description": "An ISO 639 language code in lower case: en, es, de, fr, zh.",
                "examples": ["en", "es", "zh"],
            ],
            "hours": [
                "type": "string",
                "pattern": "^(([01]?[0-9]|2[0-3]):[0-5][0-9] *- *(([01]?[0-9]|2[0-3]):[0-5][0-9]|24:00)|closed)$",
                "description": "Opening hours as \"HH:MM-HH:MM\" in the bot's time zone, 24-hour clock, in quotes. Example: \"09:00-18:00\". An end before the start runs past midnight (\"22:00-02:00\"); 24:00 is allowed as an end. \"closed\" means closed that day.",
                "examples": ["09:00-18:00"],
            ],
            "dayHours": [
                "description": "Opening hours for these days: \"09:00-18:00\", or a list such as [\"09:00-14:00\", \"16:00-19:00\"] for a split day.",
                "anyOf": [reference("hours"), list(of: reference("hours"))],
            ],
            "schedule": schedule,
        ],
    ]

    /// `session: {idle_reset}`.
    package static let botSession: JSONSchema = [
        "type": "object",
        "description": "When a conversation starts a new session (counters, `once` marks and the handoff are reset).",
        "additionalProperties": false,
        "properties": [
            "idle_reset": [
                "description": .string("A customer message after this much silence starts a new session. " + durationHelp),
                "allOf": [reference("duration")],
            ],
        ],
    ]

    /// `limits: {max_bot_replies, loop_guard, decision_budget}`.
    package static let botLimits: JSONSchema = [
        "type": "object",
        "description": "Safety limits: when max_bot_replies or loop_guard is reached the bot hands off instead of replying; decision_budget bounds the time one message may take.",
        "additionalProperties": false,
        "properties": [
            "max_bot_replies": [
                "type": "integer",
                "minimum": 1,
                "maximum": 1_000_000,
                "description": "At most this many bot replies per session; then the bot hands off.",
            ],
            "loop_guard": botLoopGuard,
            "decision_budget": [
                "type": "string",
                "pattern": "^[0-9]+(ms|s)$",
                "default": "10ms",
                "description": "The most time one message's decision may spend, from 1ms to 60s, in milliseconds or seconds: 10ms, 1s. Once it is spent, the regexes of the rules not yet tried count as no match (a regex running then is stopped), and the decision is flagged in its trace, the log and the metrics. Default: 10ms.",
                "examples": ["10ms", "50ms"],
            ],
        ],
    ]

    /// `loop_guard: {replies, within, message}`.
    package static let botLoopGuard: JSONSchema = [
        "type": "object",
        "description": "Hand off when the bot would send more than `replies` replies within `within`, for example when another bot is talking to it.",
        "additionalProperties": false,
        "required": ["replies", "within"],
        "properties": [
            "replies": [
                "type": "integer",
                "minimum": 1,
                "maximum": 10_000,
                "description": "The most replies allowed in the window.",
            ],
            "within": [
                "description": .string("The length of the window. " + durationHelp),
                "allOf": [reference("duration")],
            ],
            "message": [
                "description": "The system notice the customer sees when the loop guard hands off (templates like {{customer.name}} work), or one per language: {en: ..., es: ...}. Default: handoff.system_message.",
                "anyOf": [["type": "string", "minLength": 1], perLanguage(["type": "string", "minLength": 1])],
                "examples": ["Let me get a person to help you with this."],
            ],
        ],
    ]

    /// `matching: {word_forms, typos}`.
    package static let botMatching: JSONSchema = [
        "type": "object",
        "description": "How keywords match besides as written, for every rule of this bot; a rule or a keyword with exact: true keeps matching only as written. Needs `language`.",
        "additionalProperties": false,
        "properties": [
            "word_forms": [
                "type": "boolean",
                "default": false,
                "description": "true: a keyword also matches other forms of its words in the bot's languages (Snowball stemmers): refund matches refunds, refunded, refunding; cancel matches cancelling, cancelled. Chinese, Japanese and Thai keywords keep matching anywhere in the text.",
            ],
            "typos": [
                "type": "boolean",
                "default": false,
                "description": "true: a keyword of 5 to 8 letters also matches a word one letter off (a letter added, missing, changed, or two swapped: refnd, refudn), and one of 9 letters or more a word two letters off — unless that word is itself spelled right in one of the bot's languages (cancer is not a typo of cancel). Checked against the system's hunspell dictionaries.",
            ],
        ],
    ]

    /// `handoff: {system_message, queue, notify}` of the bot file.
    package static let botHandoff: JSONSchema = [
        "type": "object",
        "description": "Defaults for every handoff action of this bot.",
        "additionalProperties": false,
        "properties": [
            "system_message": [
                "description": "The system message the customer sees when the conversation is handed to an agent, unless the handoff action gives its own message; or one per language, {en: ..., es: ...}, chosen as a reply's language is. Default: the seed's \"Thanks for your question! We're connecting you to a support agent now.\"",
                "anyOf": [["type": "string", "minLength": 1], perLanguage(["type": "string", "minLength": 1])],
            ],
            "queue": [
                "type": "string",
                "minLength": 1,
                "description": "The agent queue for handoffs and notifications that name none. Default: general.",
            ],
            "notify": [
                "type": "boolean",
                "default": true,
                "description": "true: every handoff also raises an agent notification.",
            ],
        ],
    ]

    /// One schedule: opening hours by day or range of days, and `except` dates.
    private static let schedule: JSONSchema = {
        let days: [(key: String, description: String)] = [
            ("mon", "Opening hours on Monday."), ("tue", "Opening hours on Tuesday."),
            ("wed", "Opening hours on Wednesday."), ("thu", "Opening hours on Thursday."),
            ("fri", "Opening hours on Friday."), ("sat", "Opening hours on Saturday."),
            ("sun", "Opening hours on Sunday."),
            ("mon-fri", "Opening hours on every day from Monday to Friday."),
            ("mon-sat", "Opening hours on every day from Monday to Saturday."),
            ("mon-sun", "Opening hours on every day from Monday to Sunday."),
            ("sat-sun", "Opening hours on every day from Saturday to Sunday."),
            ("daily", "Opening hours on every day of the week."),
            ("weekdays", "Opening hours Monday to Friday (the same as mon-fri)."),
            ("weekends", "Opening hours on Saturday and Sunday (the same as sat-sun)."),
        ]
        let hours = days.map { Member(key: $0.key, value: ["description": .string($0.description), "allOf": [reference("dayHours")]]) }
        let except: JSONSchema = [
            "type": "array",
            "description": "Dates (YYYY-MM-DD, in the bot's time zone) on which the schedule is closed all day, such as public holidays.",
            "items": [
                "type": "string",
                "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
                "description": "A date, YYYY-MM-DD.",
            ],
        ]
        let day = "(" + Schedule.weekdayNames.joined(separator: "|") + ")"
        return [
            "type": "object",
            "description": "Opening hours per day or range of days (mon, tue, wed, thu, fri, sat, sun, a range such as mon-fri, daily, weekdays, weekends), plus `except` dates. Days not listed are closed.",
            "additionalProperties": false,
            "minProperties": 1,
            "properties": .object(hours + [Member(key: "except", value: except)]),
            "patternProperties": .object([Member(key: "^\(day)-\(day)$", value: [
                "description": "Opening hours on every day of this range (for example tue-thu; fri-mon runs over the weekend).",
                "allOf": [reference("dayHours")],
            ])]),
        ]
    }()
}
