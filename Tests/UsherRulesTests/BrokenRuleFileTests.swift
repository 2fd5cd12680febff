import Foundation
import Testing
import UsherDiagnostics
import UsherRules
import UsherTestSupport

/// A broken bot as a support lead might write it, and exactly what `usher check` must say.
struct BrokenCase: CustomTestStringConvertible, Sendable {
    let name: String
    var rules: String
    var bot: String?
    var extraFiles: [String: String] = [:]
    let expected: [String]
    var testDescription: String { name }
}

let bot = """
bot: test
timezone: Asia/Shanghai
rules: [rules.yaml]
schedules:
  business_hours:
    mon-fri: "09:00-18:00"

"""

let okRule = """
version: 1
rules:
  - id: hello
    when: {keywords: [hello]}
    then: [reply: "Hi!"]

"""

let brokenCases: [BrokenCase] = [
    BrokenCase(name: "misspelt rule key", rules: #"""
    version: 1
    rules:
      - id: refund
        whne: {keywords: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        "b/rules.yaml:4:5: error: [unknown-key] unknown key 'whne' in a rule; did you mean 'when'?",
    ]),
    BrokenCase(name: "conditions and actions at the level of the rule", rules: #"""
    version: 1
    rules:
      - id: refund
        keywords: [refund, refunds]
        then: [reply: "ok"]
      - id: cancel
        when: {customer_messages: 1}
        keywrods: [cancel]
        then: [reply: "ok"]
      - id: greet
        when: {keywords: [hello]}
        reply: "Hi!"
      - id: late
        regex:
          - '\blate\b'
        then: [reply: "Sorry"]
    """#, expected: [
        "b/rules.yaml:4:5: error: [unknown-key] 'keywords' is a condition, not a rule option: it belongs under 'when:'; write 'when: {keywords: [refund, refunds]}'",
        "b/rules.yaml:8:5: error: [unknown-key] unknown key 'keywrods' in a rule; if it is the condition 'keywords', it belongs under 'when:'; move it into the rule's 'when:' on line 7 as 'keywords: [cancel]'",
        #"b/rules.yaml:10:9: error: [no-actions] rule 'greet' has no actions; add 'then:' with at least one action, like '- reply: "…"'"#,
        #"b/rules.yaml:12:5: error: [unknown-key] 'reply' is an action, not a rule option: it belongs under 'then:'; write 'then: [reply: "Hi!"]'"#,
        "b/rules.yaml:14:5: error: [unknown-key] 'regex' is a condition, not a rule option: it belongs under 'when:'; write 'when:' on a line of its own and indent 'regex:' under it",
    ]),
    BrokenCase(name: "misspelt condition key", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywrds: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:12: error: [unknown-key] unknown condition 'keywrds'; did you mean 'keywords'?"#,
    ]),
    BrokenCase(name: "misspelt action", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund]}
        then:
          - replly: "ok"
    """#, expected: [
        #"b/rules.yaml:6:9: error: [unknown-action] unknown action 'replly'; did you mean 'reply'?"#,
    ]),
    BrokenCase(name: "unknown top-level key", rules: #"""
    version: 1
    rule:
      - id: refund
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:2:1: error: [unknown-key] unknown key 'rule' in a rule file; did you mean 'rules'?"#,
    ]),
    BrokenCase(name: "priority is not a number", rules: #"""
    version: 1
    rules:
      - id: refund
        priority: high
        when: {keywords: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:15: error: [wrong-type] expected a whole number for 'priority', found 'high'"#,
    ]),
    BrokenCase(name: "keywords with an unknown group", rules: #"""
    version: 1
    rules:
      - id: refund
        when:
          keywords: {some: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:5:18: error: [unknown-key] unknown key 'some' in 'keywords'; expected one of: any, all, none"#,
    ]),
    BrokenCase(name: "duplicate key", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund]}
        then: [reply: "ok"]
        id: refund-2
    """#, expected: [
        #"b/rules.yaml:6:5: error: [duplicate-key] duplicate key 'id' in this mapping"#,
    ]),
    BrokenCase(name: "regex missing parenthesis", rules: #"""
    version: 1
    rules:
      - id: order
        when:
          regex: '(?<order>\d{3}-\d{7}'
        then: [reply: "ok {{order}}"]
    """#, expected: [
        #"b/rules.yaml:5:35: error: [invalid-regex] invalid regular expression: missing closing parenthesis"#,
    ]),
    BrokenCase(name: "regex error after Chinese text", rules: #"""
    version: 1
    rules:
      - id: order
        when: {regex: "退款[a-"}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:25: error: [invalid-regex] invalid regular expression: missing terminating ] for character class"#,
    ]),
    BrokenCase(name: "template variable without a capture", rules: #"""
    version: 1
    rules:
      - id: order
        when: {keywords: [order]}
        then: [reply: "Noted order {{order}}."]
    """#, expected: [
        #"b/rules.yaml:5:34: error: [unknown-template-variable] template variable 'order' can never be set: rule 'order' has no regex with named groups; name a group in the rule's regex, like (?<order>…)"#,
    ]),
    BrokenCase(name: "misspelt template variable", rules: #"""
    version: 1
    rules:
      - id: order
        when: {regex: '(?<order>\d{3}-\d{7}-\d{7})'}
        then: [reply: "Noted order {{ordr}}."]
    """#, expected: [
        #"b/rules.yaml:5:34: error: [unknown-template-variable] template variable 'ordr' can never be set: rule 'order' can capture only 'order'; did you mean 'order'?"#,
    ]),
    BrokenCase(name: "unclosed template", rules: #"""
    version: 1
    rules:
      - id: order
        when: {regex: '(?<order>\d+)'}
        then: [reply: "Noted order {{order."]
    """#, expected: [
        #"b/rules.yaml:5:32: error: [invalid-template] '{{' is never closed; write '{{name}}'"#,
    ]),
    BrokenCase(name: "unknown list", rules: #"""
    version: 1
    lists:
      human: [human, agent]
    rules:
      - id: wants-human
        when: {keywords: {any: $humna}}
        then: [handoff: {reason: asked}]
    """#, expected: [
        #"b/rules.yaml:6:28: error: [unknown-list] unknown list '$humna'; did you mean '$human'?"#,
    ]),
    BrokenCase(name: "tab indentation", rules: #"""
    version: 1
    rules:
    	- id: refund
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:3:1: error: [tab-indent] tab character used for indentation; YAML needs spaces"#,
    ]),
    BrokenCase(name: "anchor and alias", rules: #"""
    version: 1
    rules:
      - id: a
        when: &w {keywords: [refund]}
        then: [reply: "ok"]
      - id: b
        when: *w
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:11: error: [anchor] anchors (&name) are not supported in Usher files; repeat the value or use a $list"#,
        #"b/rules.yaml:7:11: error: [alias] aliases (*name) are not supported in Usher files; repeat the value or use a $list"#,
    ]),
    BrokenCase(name: "empty file", rules: "", expected: [
        #"b/rules.yaml:1:1: error: [empty-file] the file is empty"#,
    ]),
    BrokenCase(name: "comments only", rules: #"""
    # nothing here yet
    """#, expected: [
        #"b/rules.yaml:1:1: error: [empty-file] the file is empty"#,
    ]),
    BrokenCase(name: "missing version", rules: #"""
    rules:
      - id: refund
        when: {keywords: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:1:1: error: [missing-key] a rule file needs 'version'; add a line like 'version: 1'"#,
    ]),
    BrokenCase(name: "unsupported version", rules: #"""
    version: 2
    rules:
      - id: refund
        when: {keywords: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:1:10: error: [unsupported-version] this Usher understands rule files of version 1, found '2'; write 'version: 1'"#,
    ]),
    BrokenCase(name: "unknown schedule", rules: #"""
    version: 1
    rules:
      - id: night
        when: {during: busines_hours}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:20: error: [unknown-schedule] unknown schedule 'busines_hours'; did you mean 'business_hours'?"#,
    ]),
    BrokenCase(name: "invalid duration", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund]}
        cooldown: 10 min
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:5:15: error: [invalid-duration] '10 min' is not a duration for 'cooldown'; write a number and a unit: 30s, 10m, 2h, 1d (or 1h30m)"#,
    ]),
    BrokenCase(name: "rule without actions", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund]}
    """#, expected: [
        #"b/rules.yaml:3:9: error: [no-actions] rule 'refund' has no actions; add 'then:' with at least one action, like '- reply: "…"'"#,
    ]),
    BrokenCase(name: "empty action list", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund]}
        then: []
    """#, expected: [
        #"b/rules.yaml:5:11: error: [no-actions] rule 'refund' has no actions; add at least one, like '- reply: "…"'"#,
    ]),
    BrokenCase(name: "negative count", rules: #"""
    version: 1
    rules:
      - id: first
        when: {customer_messages: {at_least: -1}}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:42: error: [out-of-range] 'at_least' must be at least 0, found -1"#,
    ]),
    BrokenCase(name: "between reversed", rules: #"""
    version: 1
    rules:
      - id: middle
        when: {customer_messages: {between: [5, 2]}}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:41: error: [out-of-range] 'between: [5, 2]' is empty; write the smaller number first"#,
    ]),
    BrokenCase(name: "yes instead of true", rules: #"""
    version: 1
    rules:
      - id: refund
        once: yes
        when: {keywords: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:11: error: [wrong-type] expected true or false for 'once', found 'yes'; write 'true'"#,
    ]),
    BrokenCase(name: "unquoted colon", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund]}
        then:
          - reply: Note: we refund within 7 days
    """#, expected: [
        #"b/rules.yaml:6:20: error: [yaml-syntax] mapping values are not allowed in this context; a value that contains ': ' must be quoted, and a key must start its own line"#,
    ]),
    BrokenCase(name: "two actions in one item", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund]}
        then:
          - reply: "ok"
            tag: refund
    """#, expected: [
        #"b/rules.yaml:6:9: error: [action-shape] each action is a separate list item with one key; start each of 'reply', 'tag' on its own '- ' line"#,
    ]),
    BrokenCase(name: "unknown condition far from every key", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {xyzzy: 1}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:12: error: [unknown-key] unknown condition 'xyzzy'; expected one of: keywords, regex, customer_messages, bot_replies, fallbacks_in_a_row, idle_for, session_age, during, outside, tags, channel, locale, any, all, not"#,
    ]),
    BrokenCase(name: "unknown action far from every key", rules: #"""
    version: 1
    rules:
      - id: refund
        then: [frobnicate: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:12: error: [unknown-action] unknown action 'frobnicate'; actions are: reply, system, handoff, tag, untag, notify, set"#,
    ]),
    BrokenCase(name: "rule option inside then", rules: #"""
    version: 1
    rules:
      - id: refund
        then: [reply: "ok", priority: 3]
    """#, expected: [
        #"b/rules.yaml:4:25: error: [unknown-action] unknown action 'priority'; 'priority' is a rule option: move it out of 'then', level with 'when'"#,
    ]),
    BrokenCase(name: "unknown keys inside condition and action values", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {customer_messages: {more_than: 3}, idle_for: {longer: 1m}, tags: {some: vip}}
        then:
          - handoff: {reason: r, team: billing}
          - notify: {txt: "VIP waiting"}
          - reply: {sequense: [a, b]}
    """#, expected: [
        #"b/rules.yaml:4:31: error: [empty-condition] 'customer_messages' needs a number, 'at_least', 'at_most' or 'between: [a, b]'"#,
        #"b/rules.yaml:4:32: error: [unknown-key] unknown key 'more_than' in 'customer_messages'; expected one of: at_least, at_most, between"#,
        #"b/rules.yaml:4:58: error: [unknown-key] unknown key 'longer' in 'idle_for'; expected one of: at_least, at_most"#,
        #"b/rules.yaml:4:78: error: [unknown-key] unknown key 'some' in 'tags'; expected one of: any, all, none"#,
        #"b/rules.yaml:6:30: error: [unknown-key] unknown key 'team' in 'handoff'; expected one of: reason, queue, priority, message"#,
        #"b/rules.yaml:7:17: error: [missing-key] 'notify' needs 'text'; add a line like 'text: "VIP customer waiting"'"#,
        #"b/rules.yaml:7:18: error: [unknown-key] unknown key 'txt' in 'notify'; did you mean 'text'?"#,
        #"b/rules.yaml:8:16: error: [missing-key] this reply needs 'text' or 'sequence'; add a line like 'text: "…"'"#,
        #"b/rules.yaml:8:17: error: [unknown-key] unknown key 'sequense' in 'reply'; did you mean 'sequence'?"#,
    ]),
    BrokenCase(name: "rule option inside when", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund], once: true}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:32: error: [unknown-key] unknown condition 'once'; 'once' is a rule option: move it out of the condition, level with 'when'"#,
    ]),
    BrokenCase(name: "missing id", rules: #"""
    version: 1
    rules:
      - when: {keywords: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:3:5: error: [missing-key] this rule needs 'id'; add a line like 'id: refund'"#,
    ]),
    BrokenCase(name: "bad handoff priority", rules: #"""
    version: 1
    rules:
      - id: vip
        when: {keywords: [vip]}
        then: [handoff: {reason: vip, priority: critical}]
    """#, expected: [
        #"b/rules.yaml:5:45: error: [invalid-value] unknown handoff priority 'critical'; use low, normal, high or urgent"#,
    ]),
    BrokenCase(name: "two documents", rules: #"""
    version: 1
    rules: []
    ---
    version: 1
    """#, expected: [
        #"b/rules.yaml:3:1: error: [multiple-documents] only one YAML document per file is allowed"#,
    ]),
    BrokenCase(name: "rules is a mapping", rules: #"""
    version: 1
    rules:
      id: refund
      then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:3:3: error: [wrong-type] expected 'rules' as a list (each rule starts with '- id: …'), found a mapping"#,
    ]),
    BrokenCase(name: "invalid rule id", rules: #"""
    version: 1
    rules:
      - id: Refund Rule
        when: {keywords: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:3:9: error: [invalid-id] 'Refund Rule' is not a valid rule id; use lowercase letters, digits, '-' and '_', like 'order-number'"#,
    ]),
    BrokenCase(name: "empty keyword", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: ["\u200B", refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:23: error: [empty-keyword] this keyword is empty once spaces and invisible characters are removed; delete it"#,
    ]),
    BrokenCase(name: "shadowed rule", rules: #"""
    version: 1
    rules:
      - id: catch-all
        then: [reply: "Hello!"]
      - id: refund
        when: {keywords: [refund]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:5:9: warning: [shadowed-rule] rule 'refund' can never fire: rule 'catch-all' comes first (priority 0) and has no condition, so it always wins; raise this rule's priority or narrow 'catch-all'"#,
    ]),
    BrokenCase(name: "threshold after a handoff", rules: #"""
    version: 1
    rules:
      - id: threshold
        when: {customer_messages: {at_least: 4}}
        then: [handoff: {reason: threshold}]
      - id: late
        priority: 10
        when: {customer_messages: {at_least: 6}, keywords: [still]}
        then: [reply: "still here"]
    """#, expected: [
        #"b/rules.yaml:6:9: warning: [unreachable-threshold] rule 'late' needs customer_messages at least 6, but rule 'threshold' hands off at customer message 4, after which the bot is silent until a new session"#,
    ]),
    BrokenCase(name: "sequence too long", rules: #"""
    version: 1
    rules:
      - id: opening
        when: {customer_messages: {at_most: 2}}
        then:
          - reply:
              sequence: ["one", "two", "three"]
    """#, expected: [
        #"b/rules.yaml:3:9: warning: [sequence-too-long] this sequence has 3 texts but rule 'opening' can fire at most 2 times per session (customer_messages is at most 2); the texts after the 2nd are never sent"#,
    ]),
    BrokenCase(name: "duplicate keywords", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {keywords: [refund, money back, REFUND]}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:43: warning: [duplicate-keyword] keyword 'REFUND' is listed twice (they are the same once case and width are ignored)"#,
    ]),
    BrokenCase(name: "regex matches empty", rules: #"""
    version: 1
    rules:
      - id: digits
        when: {regex: '\d*'}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:19: warning: [regex-matches-empty] this regex matches the empty string, so it matches every message; make part of it required (use + instead of *)"#,
    ]),
    BrokenCase(name: "catastrophic regex", rules: #"""
    version: 1
    rules:
      - id: words
        when: {regex: '(\w+\s?)+$'}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:19: warning: [catastrophic-regex] this regex nests unbounded repeats (like (a+)+), which can take exponential time on long messages; rewrite it without a repeat inside a repeat"#,
    ]),
    BrokenCase(name: "catastrophic alternatives and repeated parts", rules: #"""
    version: 1
    rules:
      - id: as
        when: {regex: '^(a|aa)+b'}
        then: [reply: "ok"]
      - id: twelve
        when: {regex: '(.*a){12}x'}
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:19: warning: [catastrophic-regex] this regex repeats alternatives that can match the same text (like (a|aa)+), which can take exponential time on long messages; make the alternatives start differently, or merge them (a+)"#,
        #"b/rules.yaml:7:19: warning: [catastrophic-regex] this regex repeats a part with an unbounded repeat several times (like (.*a){12}), which can take time growing with a high power of the message length; make the repeat stop at a character the rest cannot match (like ([^a]*a){12})"#,
    ]),
    BrokenCase(name: "regex escapes eaten by double quotes", rules: #"""
    version: 1
    rules:
      - id: refund
        when: {regex: "\brefund\b"}
        then: [reply: "ok"]
      - id: dont
        when:
          regex: ["(?i)don't\tknow", 'fine\b']
        then: [reply: "ok"]
    """#, expected: [
        #"b/rules.yaml:4:20: warning: [regex-in-double-quotes] inside double quotes YAML turned '\b' into a backspace (not a word boundary) before the regex saw it; write the regex in single quotes: '\brefund\b'"#,
        #"b/rules.yaml:8:25: warning: [regex-in-double-quotes] inside double quotes YAML turned '\t' into a tab before the regex saw it; write the regex in single quotes: '(?i)don''t\tknow'"#,
    ]),
    BrokenCase(name: "unknown time zone", rules: okRule, bot: #"""
    bot: test
    timezone: Asia/Shangai
    rules: [rules.yaml]
    """#, expected: [
        #"b/bot.yaml:2:11: error: [unknown-timezone] unknown time zone 'Asia/Shangai'; did you mean 'Asia/Shanghai'?"#,
    ]),
    BrokenCase(name: "a city for a time zone, and the rule files' errors in the same run", rules: #"""
    version: 1
    rules:
      - id: refund
        whne: {keywords: [refund]}
        then: [reply: "ok"]
      - id: late
        when: {during: business_hours}
        then: [reply: "We're open"]
    """#, bot: #"""
    bot: test
    timezone: London
    rules: [rules.yaml]
    schedules:
      business_hours:
        mon-fri: "9-18"
    """#, expected: [
        #"b/bot.yaml:2:11: error: [unknown-timezone] unknown time zone 'London'; did you mean 'Europe/London'?"#,
        #"b/bot.yaml:6:14: error: [invalid-time] '9-18' is not a time window; write it as "HH:MM-HH:MM" (24-hour clock), like "09:00-18:00""#,
        "b/rules.yaml:4:5: error: [unknown-key] unknown key 'whne' in a rule; did you mean 'when'?",
    ]),
    BrokenCase(name: "time zones: a city in lower case, a misspelt city, no guess", rules: okRule, bot: #"""
    bot: test
    timezone: new york
    rules: [rules.yaml]
    """#, expected: [
        #"b/bot.yaml:2:11: error: [unknown-timezone] unknown time zone 'new york'; did you mean 'America/New_York'?"#,
    ]),
    BrokenCase(name: "a misspelt city", rules: okRule, bot: "bot: test\ntimezone: Londn\nrules: [rules.yaml]\n", expected: [
        #"b/bot.yaml:2:11: error: [unknown-timezone] unknown time zone 'Londn'; did you mean 'Europe/London'?"#,
    ]),
    BrokenCase(name: "a time zone abbreviation", rules: okRule, bot: "bot: test\ntimezone: CST\nrules: [rules.yaml]\n", expected: [
        #"b/bot.yaml:2:11: error: [unknown-timezone] unknown time zone 'CST'; use an IANA name like 'Asia/Shanghai' or 'Europe/Madrid'"#,
    ]),
    BrokenCase(name: "bad business hours", rules: okRule, bot: #"""
    bot: test
    timezone: Asia/Shanghai
    rules: [rules.yaml]
    schedules:
      business_hours:
        mon-fri: "9am-6pm"
    """#, expected: [
        #"b/bot.yaml:6:14: error: [invalid-time] '9am-6pm' is not a time window; write it as "HH:MM-HH:MM" (24-hour clock), like "09:00-18:00""#,
    ]),
    BrokenCase(name: "time windows in the right shape but wrong", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml]
    schedules:
      business_hours:
        mon-fri: ["09:00-18:60", "25:00-26:00", "10:00-10:00", "24:00-06:00"]
    """#, expected: [
        #"b/bot.yaml:5:15: error: [invalid-time] '18:60' in '09:00-18:60' is not a time of day; hours go from 00 to 24 (24:00 only as an end), minutes from 00 to 59"#,
        #"b/bot.yaml:5:30: error: [invalid-time] '25:00' in '25:00-26:00' is not a time of day; hours go from 00 to 23, minutes from 00 to 59"#,
        #"b/bot.yaml:5:45: error: [invalid-time] '10:00-10:00' starts and ends at the same time, so it is empty; write the hours it is open, like "09:00-18:00""#,
        #"b/bot.yaml:5:60: error: [invalid-time] '24:00-06:00' starts at 24:00, which is the end of a day; start at 00:00"#,
    ]),
    BrokenCase(name: "misspelt weekday range", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml]
    schedules:
      business_hours:
        mon-fir: "09:00-18:00"
    """#, expected: [
        #"b/bot.yaml:5:5: error: [invalid-day] 'mon-fir' is not a day or range of days; did you mean 'mon-fri'?"#,
    ]),
    BrokenCase(name: "missing rule file", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml, faq.yaml]
    """#, expected: [
        #"b/bot.yaml:2:21: error: [missing-rule-file] rule file 'faq.yaml' does not exist (paths are relative to the bot file's folder, b)"#,
    ]),
    BrokenCase(name: "a folder named like a rule file", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml, faq.yaml]
    """#, extraFiles: ["b/faq.yaml/en.yaml": okRule], expected: [
        #"b/bot.yaml:2:21: error: [missing-rule-file] 'faq.yaml' is a folder, not a rule file (relative to b); name the files in it, like 'faq.yaml/*.yaml'"#,
    ]),
    BrokenCase(name: "invalid bot id", rules: okRule, bot: #"""
    bot: Support Bot
    rules: [rules.yaml]
    """#, expected: [
        #"b/bot.yaml:1:6: error: [invalid-id] 'Support Bot' is not a valid bot id; use lowercase letters, digits and '-', like 'support'"#,
    ]),
    BrokenCase(name: "bad holiday date", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml]
    schedules:
      business_hours:
        mon-fri: "09:00-18:00"
        except: [2026-02-30]
    """#, expected: [
        #"b/bot.yaml:6:14: error: [invalid-date] '2026-02-30' is not a date; write it as YYYY-MM-DD, like 2026-12-25"#,
    ]),
    BrokenCase(name: "loop guard without window", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml]
    limits:
      loop_guard: {replies: 3}
    """#, expected: [
        #"b/bot.yaml:4:15: error: [missing-key] 'loop_guard' needs 'within'; add a line like 'within: 1m'"#,
    ]),
    BrokenCase(name: "decision budget without a unit", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml]
    limits: {decision_budget: 10}
    """#, expected: [
        #"b/bot.yaml:3:27: error: [invalid-duration] '10' is not a time budget for 'decision_budget'; write milliseconds or seconds, like 10ms or 1s"#,
    ]),
    BrokenCase(name: "decision budget too long", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml]
    limits:
      decision_budget: 90s
    """#, expected: [
        #"b/bot.yaml:4:20: error: [out-of-range] 'decision_budget' must be between 1ms and 60s, found 90s"#,
    ]),
    BrokenCase(name: "duplicate rule id across files", rules: okRule, bot: #"""
    bot: test
    rules: [rules.yaml, more.yaml]
    """#, extraFiles: ["b/more.yaml": #"""
    version: 1
    rules:
      - id: hello
        when: {keywords: [hi]}
        then: [reply: "Hello!"]
    """#], expected: [
        #"b/more.yaml:3:9: error: [duplicate-rule-id] rule id 'hello' is already used; rule ids must be unique across all files of a bot"#,
    ]),
    BrokenCase(name: "two fallbacks", rules: okRule + "fallback: [reply: \"Sorry?\"]\n", bot: #"""
    bot: test
    rules: [rules.yaml, more.yaml]
    """#, extraFiles: ["b/more.yaml": #"""
    version: 1
    fallback:
      - reply: "Pardon?"
    """#], expected: [
        #"b/more.yaml:3:3: error: [duplicate-fallback] only one file of a bot may set 'fallback'"#,
    ]),
    BrokenCase(name: "list defined twice", rules: "version: 1\nlists:\n  human: [human]\n", bot: #"""
    bot: test
    rules: [rules.yaml, more.yaml]
    """#, extraFiles: ["b/more.yaml": "version: 1\nlists:\n  human: [agent]\n"], expected: [
        #"b/more.yaml:3:3: error: [duplicate-list] list 'human' is already defined"#,
    ]),
    BrokenCase(name: "byte-order mark", rules: "\u{FEFF}" + okRule, expected: [
        #"b/rules.yaml:1:1: warning: [byte-order-mark] the file starts with a byte-order mark; save it as UTF-8 without BOM"#,
    ]),
    BrokenCase(name: "deep nesting", rules: "version: 1\nrules: " + String(repeating: "[", count: 200) + "\n", expected: [
        #"b/rules.yaml:2:71: error: [too-deep] nesting is deeper than 64 levels"#,
    ]),
    BrokenCase(name: "huge file", rules: "version: 1\n# " + String(repeating: "x", count: 1_100_000) + "\nrules: []\n", expected: [
        #"b/rules.yaml:1:1: error: [file-too-large] the file is 1100024 bytes; the limit is 1048576 bytes"#,
    ]),
]

@Suite("Broken rule files")
struct BrokenRuleFileTests {
    @Test(arguments: brokenCases)
    func diagnoses(_ c: BrokenCase) {
        var files = c.extraFiles
        files["b/bot.yaml"] = c.bot ?? bot
        files["b/rules.yaml"] = c.rules
        let result = RuleSetLoader.loadBot(botPath: "b/bot.yaml", files: files)
        let got = result.diagnostics.sortedForDisplay().map(\.headline)
        #expect(got == c.expected, Comment(rawValue: "\n" + got.map { "        \"\($0)\"," }.joined(separator: "\n")))
        if c.expected.contains(where: { $0.contains(": error: ") }) {
            #expect(result.ruleSet == nil, "a bot with errors must not load")
        }
    }
}

@Suite("Files that are not text")
struct BinaryRuleFileTests {
    @Test func invalidUTF8() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("bot: test\nrules: [rules.yaml]\n".utf8).write(to: dir.appendingPathComponent("bot.yaml"))
        var bytes = Array("version: 1\nrules:\n  - id: caf".utf8)
        bytes += [0xE9]                       // Latin-1 é: not UTF-8
        bytes += Array("\n    then: [reply: ok]\n".utf8)
        try Data(bytes).write(to: dir.appendingPathComponent("rules.yaml"))
        let result = RuleSetLoader.loadBot(at: dir.path)
        let got = result.diagnostics.map { "\($0.location!.line):\($0.location!.column): \($0.code): \($0.message)" }
        #expect(got == ["3:12: invalid-utf8: invalid UTF-8 byte 0xE9; save the file as UTF-8"])
        #expect(result.ruleSet == nil)
    }
}

@Suite("Folders where files belong")
struct FolderRuleFileTests {
    /// `rules.yaml` made a folder by mistake is said to be one, not "does not exist".
    @Test func aFolderNamedRulesYaml() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("rules.yaml"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("bot: test\nrules: [rules.yaml]\n".utf8).write(to: dir.appendingPathComponent("bot.yaml"))
        let result = RuleSetLoader.loadBot(at: dir.path)
        let got = result.diagnostics.map { "\($0.location!.line):\($0.location!.column): \($0.code): \($0.message)" }
        #expect(got == ["2:9: missing-rule-file: 'rules.yaml' is a folder, not a rule file (relative to \(dir.path)); name the files in it, like 'rules.yaml/*.yaml'"])
        #expect(result.ruleSet == nil)
    }
}

@Suite("Hostile YAML")
struct HostileYAMLTests {
    /// A billion-laughs file is refused at the first anchor, without expanding anything.
    @Test func aliasBomb() throws {
        let rules = "version: 1\nlists:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
            + (1...8).map { i in "  l\(i): &l\(i) [" + Array(repeating: i == 1 ? "*a" : "*l\(i - 1)", count: 9).joined(separator: ", ") + "]\n" }.joined()
        var loaded: LoadResult?
        #expect(cpuTime { loaded = load(rules: rules) } < .seconds(1))
        let result = try #require(loaded)
        #expect(result.ruleSet == nil)
        let d = result.diagnostics
        #expect(d.first?.headline == "b/rules.yaml:3:6: error: [anchor] anchors (&name) are not supported in Usher files; repeat the value or use a $list")
        #expect(d.allSatisfy { $0.code == "anchor" || $0.code == "alias" })
        #expect(d.count <= 50, "reports are capped, got \(d.count)")
    }
}

/// Issue 28, defect 4: a huge rule file on disk is refused by its size, before it is read — a
/// 4 GiB (sparse) file read whole cost seconds of CPU and its size in memory.
@Suite("A huge rule file on disk")
struct HugeRuleFileTests {
    @Test func isRefusedBeforeItIsRead() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-huge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("bot: huge\nname: Huge\nrules: [rules.yaml]\n".utf8).write(to: dir.appendingPathComponent("bot.yaml"))
        let rules = dir.appendingPathComponent("rules.yaml").path
        #expect(FileManager.default.createFile(atPath: rules, contents: nil))
        #expect(truncate(rules, 4 << 30) == 0, "a sparse 4 GiB file")
        var result: LoadResult?
        let cost = cpuTime { result = RuleSetLoader.loadBot(at: dir.path) }
        #expect(result?.ruleSet == nil)
        #expect(result?.diagnostics.map(\.headline) == ["\(rules):1:1: error: [file-too-large] the file is 4.0 GiB; the limit is 1.0 MiB"])
        #expect(cost < .milliseconds(200), "read, not stat-ed: \(cost)")
        #expect(RuleSetLoader.isBotFile(rules) == false, "telling a bot file from a rule file reads 64 KiB at most")
    }
}
