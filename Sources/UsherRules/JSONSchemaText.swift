// The JSON Schemas of bot files and rule files, as printed by `usher schema`.
//
// These strings are byte for byte the files schema/bot.schema.json and
// schema/rules.schema.json (a test checks it): edit the files, then paste them here.
// Editors load the files through the `# yaml-language-server: $schema=…` first line of
// every bot and rule file.

/// The JSON Schemas (draft-07) of Usher's YAML files, for editor completion and validation.
///
/// Each schema ends with a newline, like the file it mirrors.
public enum JSONSchemaText {
    /// The schema of `bots/<bot>/bot.yaml`: the text of `schema/bot.schema.json`.
    public static let bot: String = #"""
{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Usher bot file",
  "description": "One bot (bots/<bot>/bot.yaml): who it writes as, which rule files it uses, its schedules, limits and handoff defaults.",
  "type": "object",
  "additionalProperties": false,
  "required": [
    "bot",
    "rules"
  ],
  "properties": {
    "bot": {
      "type": "string",
      "pattern": "^[a-z0-9][a-z0-9-]*$",
      "description": "The bot's id: lowercase letters, digits and '-'. Usually the folder name, e.g. support."
    },
    "name": {
      "type": "string",
      "minLength": 1,
      "description": "The sender name on everything the bot writes, and {{bot.name}} in replies. Default: the bot id."
    },
    "sender_id": {
      "type": "string",
      "minLength": 1,
      "description": "The sender id on everything the bot writes. The bot never reacts to messages with this sender id. Default: bot:<bot id>, for example bot:support."
    },
    "description": {
      "type": "string",
      "description": "What this bot is for, in plain words."
    },
    "timezone": {
      "type": "string",
      "pattern": "^(UTC|GMT|[A-Za-z_]+(/[A-Za-z0-9_+-]+)+)$",
      "description": "The IANA time zone in which schedules are read, for example Asia/Shanghai or Europe/Madrid. Default: UTC.",
      "examples": [
        "Asia/Shanghai",
        "Europe/Madrid",
        "UTC"
      ]
    },
    "rules": {
      "type": "array",
      "minItems": 1,
      "description": "The rule files this bot uses, relative to this file; * globs allowed. Order matters: between rules of equal priority, earlier files come first. A rule id may appear only once across all of them.",
      "items": {
        "type": "string",
        "minLength": 1,
        "description": "A path such as rules.yaml or ../../rules/handoff.yaml."
      }
    },
    "schedules": {
      "type": "object",
      "description": "Named opening-hours schedules, used by rules as during: NAME or outside: NAME.",
      "additionalProperties": {
        "$ref": "#/definitions/schedule"
      }
    },
    "session": {
      "type": "object",
      "description": "When a conversation starts a new session (counters, `once` marks and the handoff are reset).",
      "additionalProperties": false,
      "properties": {
        "idle_reset": {
          "description": "A customer message after this much silence starts a new session. A number followed by s (seconds), m (minutes), h (hours), d (days) or w (weeks), with no space: 30s, 10m, 2h, 1d; parts can be combined, as in 1h30m.",
          "allOf": [
            {
              "$ref": "#/definitions/duration"
            }
          ]
        }
      }
    },
    "limits": {
      "type": "object",
      "description": "Safety limits; when one is reached the bot hands off instead of replying.",
      "additionalProperties": false,
      "properties": {
        "max_bot_replies": {
          "type": "integer",
          "minimum": 1,
          "maximum": 1000000,
          "description": "At most this many bot replies per session; then the bot hands off."
        },
        "loop_guard": {
          "type": "object",
          "description": "Hand off when the bot would send more than `replies` replies within `within`, for example when another bot is talking to it.",
          "additionalProperties": false,
          "required": [
            "replies",
            "within"
          ],
          "properties": {
            "replies": {
              "type": "integer",
              "minimum": 1,
              "maximum": 10000,
              "description": "The most replies allowed in the window."
            },
            "within": {
              "description": "The length of the window. A number followed by s (seconds), m (minutes), h (hours), d (days) or w (weeks), with no space: 30s, 10m, 2h, 1d; parts can be combined, as in 1h30m.",
              "allOf": [
                {
                  "$ref": "#/definitions/duration"
                }
              ]
            }
          }
        }
      }
    },
    "channels": {
      "description": "When several bots share one store (usher run BOT BOT …): the conversations this bot answers, as globs over the conversation's channel, for example [web, app-*]. Leave it out on the one bot that answers every conversation no other bot claims.",
      "type": "array",
      "items": {"type": "string", "minLength": 1},
      "minItems": 1
    },
    "handoff": {
      "type": "object",
      "description": "Defaults for every handoff action of this bot.",
      "additionalProperties": false,
      "properties": {
        "system_message": {
          "type": "string",
          "minLength": 1,
          "description": "The system message the customer sees when the conversation is handed to an agent, unless the handoff action gives its own message. Default: the seed's \"Thanks for your question! We're connecting you to a support agent now.\""
        },
        "queue": {
          "type": "string",
          "minLength": 1,
          "description": "The agent queue for handoffs and notifications that name none. Default: general."
        },
        "notify": {
          "type": "boolean",
          "default": true,
          "description": "true: every handoff also raises an agent notification."
        }
      }
    }
  },
  "definitions": {
    "duration": {
      "type": "string",
      "pattern": "^([0-9]+(s|m|h|d|w))+$",
      "description": "A number followed by s (seconds), m (minutes), h (hours), d (days) or w (weeks), with no space: 30s, 10m, 2h, 1d; parts can be combined, as in 1h30m.",
      "examples": [
        "30s",
        "10m",
        "2h",
        "1d",
        "1h30m"
      ]
    },
    "hours": {
      "type": "string",
      "pattern": "^(([01]?[0-9]|2[0-3]):[0-5][0-9] *- *(([01]?[0-9]|2[0-3]):[0-5][0-9]|24:00)|closed)$",
      "description": "Opening hours as \"HH:MM-HH:MM\" in the bot's time zone, 24-hour clock, in quotes. Example: \"09:00-18:00\". An end before the start runs past midnight (\"22:00-02:00\"); 24:00 is allowed as an end. \"closed\" means closed that day.",
      "examples": [
        "09:00-18:00"
      ]
    },
    "dayHours": {
      "description": "Opening hours for these days: \"09:00-18:00\", or a list such as [\"09:00-14:00\", \"16:00-19:00\"] for a split day.",
      "anyOf": [
        {
          "$ref": "#/definitions/hours"
        },
        {
          "type": "array",
          "minItems": 1,
          "items": {
            "$ref": "#/definitions/hours"
          }
        }
      ]
    },
    "schedule": {
      "type": "object",
      "description": "Opening hours per day or range of days (mon, tue, wed, thu, fri, sat, sun, a range such as mon-fri, daily, weekdays, weekends), plus `except` dates. Days not listed are closed.",
      "additionalProperties": false,
      "minProperties": 1,
      "properties": {
        "mon": {
          "description": "Opening hours on Monday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "tue": {
          "description": "Opening hours on Tuesday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "wed": {
          "description": "Opening hours on Wednesday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "thu": {
          "description": "Opening hours on Thursday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "fri": {
          "description": "Opening hours on Friday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "sat": {
          "description": "Opening hours on Saturday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "sun": {
          "description": "Opening hours on Sunday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "mon-fri": {
          "description": "Opening hours on every day from Monday to Friday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "mon-sat": {
          "description": "Opening hours on every day from Monday to Saturday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "mon-sun": {
          "description": "Opening hours on every day from Monday to Sunday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "sat-sun": {
          "description": "Opening hours on every day from Saturday to Sunday.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "daily": {
          "description": "Opening hours on every day of the week.",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "weekdays": {
          "description": "Opening hours Monday to Friday (the same as mon-fri).",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "weekends": {
          "description": "Opening hours on Saturday and Sunday (the same as sat-sun).",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        },
        "except": {
          "type": "array",
          "description": "Dates (YYYY-MM-DD, in the bot's time zone) on which the schedule is closed all day, such as public holidays.",
          "items": {
            "type": "string",
            "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$",
            "description": "A date, YYYY-MM-DD."
          }
        }
      },
      "patternProperties": {
        "^(mon|tue|wed|thu|fri|sat|sun)-(mon|tue|wed|thu|fri|sat|sun)$": {
          "description": "Opening hours on every day of this range (for example tue-thu; fri-mon runs over the weekend).",
          "allOf": [
            {
              "$ref": "#/definitions/dayHours"
            }
          ]
        }
      }
    }
  }
}
"""#

    /// The schema of rule files (`rules/*.yaml`, `bots/<bot>/rules.yaml`): the text of
    /// `schema/rules.schema.json`.
    public static let rules: String = #"""
{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Usher rule file",
  "description": "A file of auto-reply rules for Usher (rules/*.yaml or bots/<bot>/rules.yaml). Rules are tried from the highest priority down; the first that matches acts, unless it says continue: true.",
  "type": "object",
  "additionalProperties": false,
  "required": [
    "version"
  ],
  "properties": {
    "version": {
      "const": 1,
      "description": "The rule-file format version. Always 1."
    },
    "lists": {
      "type": "object",
      "description": "Named keyword lists, used in keywords as $name. A list can be used by every rule file of the bot, and each name may be defined only once per bot. Example: human: [human, agent, \"real person\", 人工].",
      "propertyNames": {
        "$ref": "#/definitions/listName"
      },
      "additionalProperties": {
        "type": "array",
        "minItems": 1,
        "description": "Words or phrases.",
        "items": {
          "type": [
            "string",
            "integer"
          ],
          "minLength": 1,
          "pattern": "^[^$]",
          "description": "A word or phrase (a list cannot contain another $list)."
        }
      }
    },
    "rules": {
      "type": "array",
      "description": "The rules. Order matters only between rules with the same priority.",
      "items": {
        "$ref": "#/definitions/rule"
      }
    },
    "fallback": {
      "description": "What to do when no rule matched the customer's message. At most one rule file per bot may have a fallback.",
      "allOf": [
        {
          "$ref": "#/definitions/actions"
        }
      ]
    }
  },
  "definitions": {
    "duration": {
      "type": "string",
      "pattern": "^([0-9]+(s|m|h|d|w))+$",
      "description": "A number followed by s (seconds), m (minutes), h (hours), d (days) or w (weeks), with no space: 30s, 10m, 2h, 1d; parts can be combined, as in 1h30m.",
      "examples": [
        "30s",
        "10m",
        "2h",
        "1d",
        "1h30m"
      ]
    },
    "template": {
      "type": "string",
      "minLength": 1,
      "description": "Text, with optional placeholders: {{name}} for a named group (?<name>...) of this rule's regex; {{customer.name}}, {{customer.id}}; {{conversation.id}}, {{conversation.customer_messages}}, {{conversation.bot_replies}}, {{conversation.channel}}, {{conversation.locale}}; {{bot.name}}, {{bot.id}}; {{metadata.KEY}} for a value written by a `set` action. Write {{name|fallback text}} when the value may be missing, for example {{customer.name|there}}. Placeholders only substitute text: no code, no loops."
    },
    "listName": {
      "type": "string",
      "pattern": "^[a-z0-9][a-z0-9_-]*$",
      "description": "The name of a keyword list: lowercase letters, digits, '_' and '-', starting with a letter or digit."
    },
    "keyword": {
      "type": [
        "string",
        "integer"
      ],
      "minLength": 1,
      "pattern": "^(?:[^$]|\\$[a-z0-9][a-z0-9_-]*$)",
      "description": "A word or phrase (\"refund\", \"money back\", \"退款\"), or $name to use a list defined under `lists` in any rule file of the bot. Matching ignores case, extra spaces and invisible characters; a keyword without accents matches with or without them, a keyword with an accent matches only the accented spelling. Words match whole words; Chinese, Japanese and Thai match anywhere in the text. A number such as 12315 is a keyword too.",
      "examples": [
        "refund",
        "money back",
        "$human"
      ]
    },
    "keywordSet": {
      "description": "One keyword or $list, or a list of them.",
      "anyOf": [
        {
          "$ref": "#/definitions/keyword"
        },
        {
          "type": "array",
          "minItems": 1,
          "items": {
            "$ref": "#/definitions/keyword"
          }
        }
      ]
    },
    "keywords": {
      "description": "Keywords to look for in the customer's message. A list (or a single keyword) means: any of these. Use {any, all, none} for more control, for example {any: $human, none: [\"delivery agent\"]}.",
      "anyOf": [
        {
          "$ref": "#/definitions/keywordSet"
        },
        {
          "type": "object",
          "additionalProperties": false,
          "minProperties": 1,
          "properties": {
            "any": {
              "description": "At least one of these keywords must appear.",
              "allOf": [
                {
                  "$ref": "#/definitions/keywordSet"
                }
              ]
            },
            "all": {
              "description": "Every one of these keywords must appear.",
              "allOf": [
                {
                  "$ref": "#/definitions/keywordSet"
                }
              ]
            },
            "none": {
              "description": "None of these keywords may appear.",
              "allOf": [
                {
                  "$ref": "#/definitions/keywordSet"
                }
              ]
            }
          }
        }
      ]
    },
    "pattern": {
      "type": "string",
      "minLength": 1,
      "description": "A regular expression (PCRE2, Unicode-aware) matched against the original text. Write it in single quotes in YAML so backslashes stay as they are: '\\bcharge\\s?back\\b'. A named group (?<order>...) becomes the placeholder {{order}} in this rule's replies.",
      "examples": [
        "\\bcharge\\s?back\\b",
        "(?<order>\\b\\d{3}-\\d{7}-\\d{7}\\b)"
      ]
    },
    "regex": {
      "description": "A regular expression, or a list of them (the condition holds when any of them matches).",
      "anyOf": [
        {
          "$ref": "#/definitions/pattern"
        },
        {
          "type": "array",
          "minItems": 1,
          "items": {
            "$ref": "#/definitions/pattern"
          }
        }
      ]
    },
    "count": {
      "description": "A number of messages: an exact number (4), or {at_least: 4}, {at_most: 3}, both together, or {between: [2, 5]} (both ends included).",
      "anyOf": [
        {
          "type": "integer",
          "minimum": 0,
          "description": "Exactly this many."
        },
        {
          "type": "object",
          "additionalProperties": false,
          "minProperties": 1,
          "dependencies": {
            "between": {
              "description": "between cannot be combined with at_least or at_most.",
              "properties": {
                "at_least": false,
                "at_most": false
              }
            }
          },
          "properties": {
            "at_least": {
              "type": "integer",
              "minimum": 0,
              "description": "This many or more."
            },
            "at_most": {
              "type": "integer",
              "minimum": 0,
              "description": "This many or fewer."
            },
            "between": {
              "type": "array",
              "items": {
                "type": "integer",
                "minimum": 0
              },
              "minItems": 2,
              "maxItems": 2,
              "description": "[low, high]: from low to high, both included. Example: [2, 5]."
            }
          }
        }
      ]
    },
    "timeRange": {
      "description": "A duration (meaning: at least this long), or {at_least: DURATION, at_most: DURATION}.",
      "anyOf": [
        {
          "$ref": "#/definitions/duration"
        },
        {
          "type": "object",
          "additionalProperties": false,
          "minProperties": 1,
          "properties": {
            "at_least": {
              "description": "At least this long.",
              "allOf": [
                {
                  "$ref": "#/definitions/duration"
                }
              ]
            },
            "at_most": {
              "description": "At most this long.",
              "allOf": [
                {
                  "$ref": "#/definitions/duration"
                }
              ]
            }
          }
        }
      ]
    },
    "tagName": {
      "type": "string",
      "minLength": 1,
      "description": "A conversation tag, for example has-order or vip. Tags stay on the conversation across sessions until a rule removes them with `untag`."
    },
    "tagSet": {
      "description": "One tag, or a list of tags.",
      "anyOf": [
        {
          "$ref": "#/definitions/tagName"
        },
        {
          "type": "array",
          "minItems": 1,
          "items": {
            "$ref": "#/definitions/tagName"
          }
        }
      ]
    },
    "condition": {
      "type": "object",
      "description": "Conditions on the incoming customer message and its conversation. Every key in one mapping must hold (AND); use any, all and not to combine differently.",
      "additionalProperties": false,
      "minProperties": 1,
      "properties": {
        "keywords": {
          "description": "Holds when the customer's message contains these keywords. A list means any of them; use {any, all, none} to combine. Items are words, phrases or $list names.",
          "allOf": [
            {
              "$ref": "#/definitions/keywords"
            }
          ]
        },
        "regex": {
          "description": "Holds when the regular expression (or any of a list) matches the customer's message. Named groups (?<name>...) become placeholders {{name}} for this rule's replies.",
          "allOf": [
            {
              "$ref": "#/definitions/regex"
            }
          ]
        },
        "customer_messages": {
          "description": "How many messages the customer has sent in this session, counting the current one. Every customer message counts, whichever rule answered it. Example: {at_most: 3} for the first three messages.",
          "allOf": [
            {
              "$ref": "#/definitions/count"
            }
          ]
        },
        "bot_replies": {
          "description": "How many replies the bot has sent in this session (before this message).",
          "allOf": [
            {
              "$ref": "#/definitions/count"
            }
          ]
        },
        "fallbacks_in_a_row": {
          "description": "How many messages in a row, just before this one, got the fallback reply because no rule matched. Example: {at_least: 2} to hand off after the bot failed to understand twice.",
          "allOf": [
            {
              "$ref": "#/definitions/count"
            }
          ]
        },
        "idle_for": {
          "description": "Holds when the conversation had been silent at least this long before this message (or within {at_least, at_most}). A number followed by s (seconds), m (minutes), h (hours), d (days) or w (weeks), with no space: 30s, 10m, 2h, 1d; parts can be combined, as in 1h30m.",
          "allOf": [
            {
              "$ref": "#/definitions/timeRange"
            }
          ]
        },
        "session_age": {
          "description": "Holds when the session started at least this long ago (or within {at_least, at_most}). A number followed by s (seconds), m (minutes), h (hours), d (days) or w (weeks), with no space: 30s, 10m, 2h, 1d; parts can be combined, as in 1h30m.",
          "allOf": [
            {
              "$ref": "#/definitions/timeRange"
            }
          ]
        },
        "during": {
          "type": "string",
          "minLength": 1,
          "description": "Holds when the message arrives inside this schedule (a name under `schedules` in bot.yaml), in the bot's time zone. Example: business_hours."
        },
        "outside": {
          "type": "string",
          "minLength": 1,
          "description": "Holds when the message arrives outside this schedule (a name under `schedules` in bot.yaml), including its `except` dates. Example: business_hours."
        },
        "tags": {
          "description": "Conditions on the conversation's tags (set by `tag` actions). A tag or a list means: any of these; use {any, all, none} for more control.",
          "anyOf": [
            {
              "$ref": "#/definitions/tagSet"
            },
            {
              "type": "object",
              "additionalProperties": false,
              "minProperties": 1,
              "properties": {
                "any": {
                  "description": "The conversation has at least one of these tags.",
                  "allOf": [
                    {
                      "$ref": "#/definitions/tagSet"
                    }
                  ]
                },
                "all": {
                  "description": "The conversation has every one of these tags.",
                  "allOf": [
                    {
                      "$ref": "#/definitions/tagSet"
                    }
                  ]
                },
                "none": {
                  "description": "The conversation has none of these tags.",
                  "allOf": [
                    {
                      "$ref": "#/definitions/tagSet"
                    }
                  ]
                }
              }
            }
          ]
        },
        "channel": {
          "type": "string",
          "minLength": 1,
          "description": "Holds when the conversation's channel matches this pattern; * matches anything. Examples: web, app-*."
        },
        "locale": {
          "type": "string",
          "minLength": 1,
          "description": "Holds when the conversation's locale matches this pattern; * matches anything. Examples: en, zh-*."
        },
        "any": {
          "type": "array",
          "minItems": 1,
          "items": {
            "$ref": "#/definitions/condition"
          },
          "description": "A list of conditions; holds when at least one of them holds."
        },
        "all": {
          "type": "array",
          "minItems": 1,
          "items": {
            "$ref": "#/definitions/condition"
          },
          "description": "A list of conditions; holds when every one of them holds."
        },
        "not": {
          "description": "A condition that must NOT hold.",
          "allOf": [
            {
              "$ref": "#/definitions/condition"
            }
          ]
        }
      }
    },
    "action": {
      "type": "object",
      "description": "One action, written as a single key: reply, system, handoff, tag, untag, notify or set.",
      "additionalProperties": false,
      "minProperties": 1,
      "maxProperties": 1,
      "properties": {
        "reply": {
          "description": "Send a message as the bot. A text; or a list of texts, used in turn (each conversation gets a fixed rotation, so replies do not repeat back to back); or {sequence: [...]}, where the first time this rule fires in a session sends the first text, the second time the second, and so on.",
          "anyOf": [
            {
              "$ref": "#/definitions/template"
            },
            {
              "type": "array",
              "minItems": 1,
              "items": {
                "$ref": "#/definitions/template"
              }
            },
            {
              "type": "object",
              "additionalProperties": false,
              "required": [
                "sequence"
              ],
              "properties": {
                "sequence": {
                  "type": "array",
                  "minItems": 1,
                  "items": {
                    "$ref": "#/definitions/template"
                  },
                  "description": "The nth time this rule fires in a session, it sends the nth text."
                }
              }
            }
          ]
        },
        "system": {
          "description": "Write a system notice into the conversation (shown to the customer as a notice, not as the bot speaking).",
          "allOf": [
            {
              "$ref": "#/definitions/template"
            }
          ]
        },
        "handoff": {
          "type": [
            "object",
            "null"
          ],
          "description": "Hand the conversation to a human agent: write the handoff system message, mark the conversation as waiting for an agent, and (if the bot says so) notify agents. After a handoff the bot stays silent except for rules with while_waiting: true. Write {reason: ..., queue: ...}, or nothing after the colon for all defaults.",
          "additionalProperties": false,
          "properties": {
            "reason": {
              "type": "string",
              "minLength": 1,
              "description": "Why the bot handed off, for agents, reports and metrics; short, like asked-for-human or threshold. Default: the rule's id.",
              "examples": [
                "asked-for-human",
                "threshold"
              ]
            },
            "queue": {
              "type": "string",
              "minLength": 1,
              "description": "The agent queue to hand off to. Default: handoff.queue in bot.yaml."
            },
            "priority": {
              "type": "string",
              "enum": [
                "low",
                "normal",
                "high",
                "urgent"
              ],
              "default": "normal",
              "description": "How urgent the handoff is for agents: low, normal (the default), high or urgent."
            },
            "message": {
              "description": "The system message the customer sees. Default: handoff.system_message in bot.yaml.",
              "allOf": [
                {
                  "$ref": "#/definitions/template"
                }
              ]
            }
          }
        },
        "tag": {
          "description": "Add a tag to the conversation.",
          "allOf": [
            {
              "$ref": "#/definitions/tagName"
            }
          ]
        },
        "untag": {
          "description": "Remove a tag from the conversation.",
          "allOf": [
            {
              "$ref": "#/definitions/tagName"
            }
          ]
        },
        "notify": {
          "description": "Notify agents without handing off; the bot keeps the conversation. A text, or {text, queue}.",
          "anyOf": [
            {
              "$ref": "#/definitions/template"
            },
            {
              "type": "object",
              "additionalProperties": false,
              "required": [
                "text"
              ],
              "properties": {
                "text": {
                  "description": "What the agents are told.",
                  "allOf": [
                    {
                      "$ref": "#/definitions/template"
                    }
                  ]
                },
                "queue": {
                  "type": "string",
                  "minLength": 1,
                  "description": "The agent queue to notify. Default: handoff.queue in bot.yaml."
                }
              }
            }
          ]
        },
        "set": {
          "type": "object",
          "description": "Set conversation metadata (shown to agents and kept with the conversation; replies can read it back as {{metadata.KEY}}). Example: {topic: refund}.",
          "minProperties": 1,
          "propertyNames": {
            "pattern": "^[A-Za-z_][A-Za-z0-9_.-]*$"
          },
          "additionalProperties": {
            "type": [
              "string",
              "number",
              "boolean"
            ],
            "description": "The value: text (placeholders allowed), a number, or true/false."
          }
        }
      }
    },
    "actions": {
      "description": "Actions, carried out in order: a list whose items are each one action (reply, system, handoff, tag, untag, notify or set). A single action may also be written without the list.",
      "anyOf": [
        {
          "type": "array",
          "minItems": 1,
          "items": {
            "$ref": "#/definitions/action"
          }
        },
        {
          "$ref": "#/definitions/action"
        }
      ]
    },
    "rule": {
      "type": "object",
      "description": "One rule: when its conditions hold, its actions run.",
      "additionalProperties": false,
      "required": [
        "id",
        "then"
      ],
      "properties": {
        "id": {
          "type": "string",
          "pattern": "^[a-z0-9][a-z0-9_-]*$",
          "description": "The rule's name, unique within the bot (across all its rule files): lowercase letters, digits, '-' and '_'. It appears in logs, reports, tests and `usher explain`."
        },
        "description": {
          "type": "string",
          "description": "What the rule is for, in plain words. Shown by `usher explain`."
        },
        "priority": {
          "type": "integer",
          "default": 0,
          "minimum": -1000000,
          "maximum": 1000000,
          "description": "Higher runs first (default 0). Rules with the same priority keep the order of bot.yaml's `rules` list, then their order in the file."
        },
        "continue": {
          "type": "boolean",
          "default": false,
          "description": "false (default): when this rule fires, no later rule is tried. true: later rules are tried too, so several rules can act on one message."
        },
        "once": {
          "type": "boolean",
          "default": false,
          "description": "true: fire at most once per session."
        },
        "cooldown": {
          "description": "After firing, skip this rule for this long in the same conversation. A number followed by s (seconds), m (minutes), h (hours), d (days) or w (weeks), with no space: 30s, 10m, 2h, 1d; parts can be combined, as in 1h30m.",
          "allOf": [
            {
              "$ref": "#/definitions/duration"
            }
          ]
        },
        "enabled": {
          "type": "boolean",
          "default": true,
          "description": "false switches the rule off without deleting it."
        },
        "while_waiting": {
          "type": "boolean",
          "default": false,
          "description": "true: this rule may also speak while the conversation waits for an agent after a handoff (for example \"An agent will be with you shortly.\"). While waiting, only such rules run. Give them a cooldown."
        },
        "when": {
          "description": "The conditions under which the rule fires. Every key must hold. Without `when` the rule matches every message.",
          "allOf": [
            {
              "$ref": "#/definitions/condition"
            }
          ]
        },
        "unless": {
          "description": "The rule does not fire when these conditions hold, even if `when` does.",
          "allOf": [
            {
              "$ref": "#/definitions/condition"
            }
          ]
        },
        "then": {
          "description": "What to do when the rule fires, in order.",
          "allOf": [
            {
              "$ref": "#/definitions/actions"
            }
          ]
        }
      }
    }
  }
}

"""#
}
