import UsherDiagnostics
import UsherYAML
import UsherText

/// Compiles the rule files of one bot into rules, sharing one keyword table and one pattern table
/// across all files. Lists are bot-wide: a `$list` defined in any of the bot's files can be used
/// in all of them.
///
/// The keys it accepts are declared once: conditions in `ConditionKind.all`, actions in
/// `ActionKind.all`, everything else in the rule-file schema (`JSONSchema.ruleFile`).
final class RuleCompiler {
    static let fileKeys = JSONSchema.ruleFile.propertyNames
    static let ruleKeys = JSONSchema.rule.propertyNames
    static let keywordGroupKeys = JSONSchema.keywordGroups.propertyNames
    static let tagGroupKeys = JSONSchema.tagGroups.propertyNames
    static let countKeys = JSONSchema.countBounds.propertyNames
    static let timeRangeKeys = JSONSchema.timeBounds.propertyNames
    static let replyKeys = JSONSchema.replyMessage.propertyNames
    static let quickReplyKeys = JSONSchema.quickReplyLink.propertyNames
    static let handoffKeys = JSONSchema.handoffFields.propertyNames
    static let notifyKeys = JSONSchema.notifyFields.propertyNames
    static let exactKeywordKeys = JSONSchema.exactKeyword.propertyNames

    /// The bot's schedules by name; `nil` when checking rule files without a bot (references to
    /// schedules are then not checked).
    let scheduleNames: [String]?
    let patternLimits: PatternLimits
    /// The bot's `matching`: how keywords match unless their rule or entry says `exact: true`.
    let matching: WordMatching
    /// The bot's `language` list; nil when checking rule files without a bot (replies per
    /// language are then not checked against it).
    let languages: [String]?

    private(set) var keywordTexts: [String] = []
    /// How each keyword of `keywordTexts` matches.
    private(set) var keywordMatching: [WordMatching] = []
    /// The rule being compiled says `exact: true`.
    private var ruleIsExact = false
    private var keywordIDs: [String: Int] = [:]
    private(set) var patterns: [Pattern] = []
    private(set) var patternLocations: [SourceLocation] = []
    private var patternIDs: [String: Int] = [:]
    private var lists: [String: (items: [KeywordItem], location: SourceLocation)] = [:]
    private(set) var rules: [Rule] = []
    private var ruleLocations: [String: SourceLocation] = [:]
    private(set) var fallback: [Action]?
    private(set) var fallbackLocation: SourceLocation?
    private var extra: [Diagnostic] = []

    init(scheduleNames: [String]?, patternLimits: PatternLimits = .default, matching: WordMatching = .exact,
         languages: [String]? = nil) {
        self.scheduleNames = scheduleNames
        self.patternLimits = patternLimits
        self.matching = matching
        self.languages = languages
    }

    var diagnostics: [Diagnostic] { extra }

    // MARK: Pass 1 — file shape and lists

    /// Checks the top level of a rule file and collects its lists. Returns the top-level mapping.
    func collectLists(_ reader: NodeReader) -> [String: YAMLNode]? {
        guard let root = reader.document.root else { return nil }
        guard let top = reader.mapping(root, "a rule file", allowed: Self.fileKeys) else { return nil }
        if let v = reader.require(top["version"], "version", in: root, "a rule file", example: "version: 1"),
           let s = reader.text(v, "'version'"), s != "1" {
            reader.error("unsupported-version", "this Usher understands rule files of version 1, found '\(s)'; write 'version: 1'", at: v)
        }
        if top["rules"] == nil, top["fallback"] == nil, top["lists"] == nil, top.count == root.mapping?.count {
            reader.error("missing-key", "a rule file needs 'rules', 'lists' or 'fallback'; add 'rules:' followed by a list of rules", at: root)
        }
        if let node = top["lists"] {
            if let pairs = node.mapping {
                for pair in pairs {
                    guard let name = pair.key.scalar else { continue }
                    if !BotFileParser.isValidID(name, allowUnderscore: true) {
                        reader.error("invalid-id", "'\(name)' is not a valid list name; use lowercase letters, digits, '-' and '_'", at: pair.key)
                        continue
                    }
                    if let first = lists[name] {
                        reader.error("duplicate-list", "list '\(name)' is already defined", at: pair.key,
                                     notes: [.init("first defined here", at: first.location)])
                        continue
                    }
                    guard let items = keywordItems(reader, pair.value, "list '\(name)'") else { continue }
                    for item in items where item.text.hasPrefix("$") {
                        reader.error("nested-list", "a list cannot refer to another list ('\(item.text)'); write the words out", at: item.node)
                    }
                    lists[name] = (items.filter { !$0.text.hasPrefix("$") }, pair.key.location)
                }
            } else {
                reader.error("wrong-type", "expected 'lists' as a mapping of list names to lists of words, found \(node.kindName)", at: node)
            }
        }
        return top
    }

    // MARK: Pass 2 — rules

    func compileRules(_ reader: NodeReader, top: [String: YAMLNode]) {
        if let node = top["rules"] {
            if let items = node.sequence {
                for item in items { compileRule(reader, item) }
            } else if !node.isNull {
                reader.error("wrong-type", "expected 'rules' as a list (each rule starts with '- id: …'), found \(node.kindName)", at: node)
            }
        }
        if let node = top["fallback"] {
            if let loc = fallbackLocation {
                reader.error("duplicate-fallback", "only one file of a bot may set 'fallback'", at: node,
                             notes: [.init("the fallback is already set here", at: loc)])
            } else if let actions = compileActions(reader, node, captures: [], context: "the fallback") {
                fallback = Self.defaultingHandoffReason(actions, to: "fallback")
                fallbackLocation = node.location
            }
        }
    }

    private func compileRule(_ reader: NodeReader, _ node: YAMLNode) {
        guard let m = reader.mapping(node, "a rule", allowed: Self.ruleKeys,
                                     explain: { Self.misplaced($0, in: node, reader) }) else { return }
        guard let idNode = reader.require(m["id"], "id", in: node, "this rule", example: "id: refund"),
              let id = reader.text(idNode, "'id'") else { return }
        var ok = true
        if !BotFileParser.isValidID(id, allowUnderscore: true) {
            reader.error("invalid-id", "'\(id)' is not a valid rule id; use lowercase letters, digits, '-' and '_', like 'order-number'", at: idNode)
            ok = false
        }
        if let first = ruleLocations[id] {
            reader.error("duplicate-rule-id", "rule id '\(id)' is already used; rule ids must be unique across all files of a bot", at: idNode,
                         notes: [.init("first used here", at: first)])
            ok = false
        } else {
            ruleLocations[id] = idNode.location
        }
        let context = "rule '\(id)'"

        func flag(_ key: String) -> Bool {
            guard let n = m[key] else { return false }
            guard let b = reader.bool(n, "'\(key)'") else { ok = false; return false }
            return b
        }
        let priority = m["priority"].map { reader.integer($0, "'priority'", in: -1_000_000...1_000_000) } ?? 0
        if priority == nil { ok = false }
        let continues = flag("continue")
        let once = flag("once")
        let enabled = m["enabled"] == nil ? true : flag("enabled")
        let whileWaiting = flag("while_waiting")
        var cooldown: Double?
        if let n = m["cooldown"] {
            cooldown = reader.duration(n, "'cooldown'")
            if cooldown == nil { ok = false }
        }
        let description = m["description"].flatMap { reader.text($0, "'description'") }
        ruleIsExact = flag("exact")
        defer { ruleIsExact = false }

        var captures = Set<String>()
        var when: Condition?
        if let n = m["when"] {
            when = compileCondition(reader, n, captures: &captures)
            if when == nil { ok = false }
        }
        var unless: Condition?
        if let n = m["unless"] {
            var ignored = Set<String>()
            unless = compileCondition(reader, n, captures: &ignored)
            if unless == nil { ok = false }
        }
        guard let thenNode = m["then"] else {
            reader.error("no-actions", "\(context) has no actions; add 'then:' with at least one action, like '- reply: \"…\"'", at: idNode)
            return
        }
        // When `when` did not compile its captures are unknown: do not guess at template variables.
        let known: Set<String>? = m["when"] != nil && when == nil ? nil : captures
        guard var actions = compileActions(reader, thenNode, captures: known, context: context), ok,
              let priority else { return }
        actions = Self.defaultingHandoffReason(actions, to: id)
        rules.append(Rule(id: id, description: description, priority: priority, continues: continues, once: once,
                          cooldown: cooldown, enabled: enabled, whileWaiting: whileWaiting, when: when,
                          unless: unless, actions: actions, captureNames: captures,
                          location: idNode.location, declarationOrder: rules.count))
    }

    /// The message for a condition or an action written at the level of the rule (`keywords:`
    /// beside `when:`, or a misspelt `keywrods:`): what it is, where it belongs, and the line
    /// as it should be. `nil` for a key that is none of these (or a misspelt rule option).
    static func misplaced(_ pair: YAMLPair, in rule: YAMLNode, _ reader: NodeReader) -> String? {
        guard let key = pair.key.scalar else { return nil }
        let found: (name: String, what: String, section: String)
        if ConditionKind.byKey[key] != nil {
            found = (key, "a condition", "when")
        } else if ActionKind.byKey[key] != nil {
            found = (key, "an action", "then")
        } else if Suggestion.closest(to: key, in: ruleKeys) != nil {
            return nil
        } else if let name = Suggestion.closest(to: key, in: ConditionKind.keys) {
            found = (name, "a condition", "when")
        } else if let name = Suggestion.closest(to: key, in: ActionKind.keys) {
            found = (name, "an action", "then")
        } else {
            return nil
        }
        let (name, what, section) = found
        let head = name == key ? "'\(key)' is \(what), not a rule option: it belongs under '\(section):'"
            : "unknown key '\(key)' in a rule; if it is \(what == "a condition" ? "the condition" : "the action") '\(name)', it belongs under '\(section):'"
        let entry = reader.written(pair.value).map { "\(name): \($0)" }
        if let existing = rule.mapping?.first(where: { $0.key.scalar == section }) {
            return "\(head); move it into the rule's '\(section):' on line \(existing.key.location.line)" + (entry.map { " as '\($0)'" } ?? "")
        }
        guard let entry else { return "\(head); write '\(section):' on a line of its own and indent '\(name):' under it" }
        return "\(head); write '\(section == "when" ? "when: {\(entry)}" : "then: [\(entry)]")'"
    }

    /// A `handoff` without a reason takes the rule's id.
    static func defaultingHandoffReason(_ actions: [Action], to reason: String) -> [Action] {
        actions.map {
            guard case var .handoff(h) = $0, h.reason.isEmpty else { return $0 }
            h.reason = reason
            return .handoff(h)
        }
    }

    // MARK: Conditions

    /// Compiles a condition mapping (all keys must hold). Named captures of `regex` are added to
    /// `captures` (only for positive positions: captures under `not` cannot be set).
    func compileCondition(_ reader: NodeReader, _ node: YAMLNode, captures: inout Set<String>) -> Condition? {
        guard let pairs = node.mapping else {
            reader.error("wrong-type", "expected a condition written as a mapping, like 'keywords: [refund]', found \(node.kindName)", at: node)
            return nil
        }
        if pairs.isEmpty {
            reader.error("empty-condition", "this condition is empty; remove it, or add a key like 'keywords: [refund]'", at: node)
            return nil
        }
        var parts: [Condition] = []
        var ok = true
        for pair in pairs {
            guard let key = pair.key.scalar else { continue }
            guard let kind = ConditionKind.byKey[key] else {
                let hint = Suggestion.closest(to: key, in: ConditionKind.keys)
                let misplaced = Self.ruleKeys.contains(key) ? "; '\(key)' is a rule option: move it out of the condition, level with 'when'" : ""
                reader.error("unknown-key", "unknown condition '\(key)'" + (hint.map { "; did you mean '\($0)'?" } ?? (misplaced.isEmpty ? "; expected one of: \(ConditionKind.keys.joined(separator: ", "))" : misplaced)), at: pair.key)
                ok = false
                continue
            }
            if let c = compileConditionValue(reader, kind, pair.value, captures: &captures) { parts.append(c) } else { ok = false }
        }
        guard ok else { return nil }
        // All of them must hold, so check the cheap ones first: counters before keywords,
        // keywords before regexes, regexes before schedules (a calendar computation).
        parts = parts.enumerated().sorted { ($0.element.cost, $0.offset) < ($1.element.cost, $1.offset) }.map(\.element)
        return parts.count == 1 ? parts[0] : .all(parts)
    }

    /// Compiles the value of one condition key by the shape its declaration gives it.
    private func compileConditionValue(_ reader: NodeReader, _ kind: ConditionKind, _ v: YAMLNode,
                                       captures: inout Set<String>) -> Condition? {
        let key = kind.key
        switch kind.value {
        case .keywords:
            return compileKeywords(reader, v)
        case .patterns:
            guard let items = reader.texts(v, "'\(key)'") else { return nil }
            var ids: [Int] = []
            for (source, itemNode) in items {
                guard let id = compilePattern(reader, source, itemNode) else { continue }
                ids.append(id)
                captures.formUnion(patterns[id].captureNames)
            }
            return ids.count == items.count && !ids.isEmpty ? .regex(ids) : nil
        case let .count(make):
            return countRange(reader, v, key).map(make)
        case let .timeRange(make):
            return timeRange(reader, v, key).map(make)
        case let .schedule(inside):
            guard let name = reader.text(v, "'\(key)'") else { return nil }
            guard let names = scheduleNames else { return .schedule(-1, inside: inside) }
            guard let index = names.firstIndex(of: name) else {
                let known = names.isEmpty ? "the bot file defines no schedules; add one under 'schedules:' in bot.yaml"
                    : "schedules in the bot file: \(names.joined(separator: ", "))"
                reader.error("unknown-schedule", "unknown schedule '\(name)'" + Suggestion.hint(for: name, in: names, otherwise: known), at: v)
                return nil
            }
            return .schedule(index, inside: inside)
        case .tags:
            guard let (any, all, none) = anyAllNone(reader, v, "'\(key)'", allowed: Self.tagGroupKeys, items: { reader.texts($1, $2) }) else { return nil }
            return .tags(any: any.map(\.0), all: all.map(\.0), none: none.map(\.0))
        case let .glob(make):
            return reader.text(v, "'\(key)'").map { make(Glob($0)) }
        case let .conditions(make):
            guard let items = v.sequence else {
                reader.error("wrong-type", "expected '\(key)' as a list of conditions (each line starting with '- '), found \(v.kindName)", at: v)
                return nil
            }
            if items.isEmpty {
                reader.error("empty-condition", "'\(key)' lists no conditions", at: v)
                return nil
            }
            var parts: [Condition] = []
            for item in items {
                guard let c = compileCondition(reader, item, captures: &captures) else { return nil }
                parts.append(c)
            }
            return make(parts)
        case .negated:
            var ignored = Set<String>()
            return compileCondition(reader, v, captures: &ignored).map(Condition.not)
        }
    }

    /// `[a, b]` (any of), a single word, `$list`, or `{any, all, none}`.
    private func compileKeywords(_ reader: NodeReader, _ v: YAMLNode) -> Condition? {
        let groups: (any: [KeywordItem], all: [KeywordItem], none: [KeywordItem])
        guard let g = anyAllNone(reader, v, "'keywords'", allowed: Self.keywordGroupKeys, items: keywordItems) else { return nil }
        groups = g
        var ok = true
        let errorsBefore = reader.diagnostics.count
        func ids(_ items: [KeywordItem]) -> [Int] {
            var out: [Int] = []
            var seen: [String: YAMLNode] = [:]
            for item in items {
                for expanded in expand(reader, item) {
                    let normal = Normalizer.normalize(expanded.text)
                    if normal.isEmpty {
                        reader.error("empty-keyword", "this keyword is empty once spaces and invisible characters are removed; delete it", at: expanded.node)
                        ok = false
                        continue
                    }
                    if let first = seen[normal] {
                        reader.warning("duplicate-keyword", "keyword '\(expanded.text)' is listed twice (they are the same once case and width are ignored)", at: expanded.node,
                                       notes: [.init("first listed here", at: first.location)])
                        continue
                    }
                    seen[normal] = expanded.node
                    let exact = expanded.exact || item.exact || ruleIsExact
                    out.append(keywordID(expanded.text, normal, exact ? .exact : matching))
                }
            }
            return out
        }
        let any = ids(groups.any), all = ids(groups.all), none = ids(groups.none)
        guard ok, reader.diagnostics.count == errorsBefore else { return nil }
        if any.isEmpty, all.isEmpty, none.isEmpty {
            reader.error("empty-condition", "'keywords' lists no words", at: v)
            return nil
        }
        return .keywords(any: any, all: all, none: none)
    }

    /// A word, or the words of a `$list` (located at the list's own items).
    private func expand(_ reader: NodeReader, _ item: KeywordItem) -> [KeywordItem] {
        guard item.text.hasPrefix("$") else { return [item] }
        let name = String(item.text.dropFirst())
        guard let list = lists[name] else {
            let hint = Suggestion.closest(to: name, in: lists.keys.sorted()).map { "; did you mean '$\($0)'?" } ?? ""
            let known = lists.isEmpty ? "; no lists are defined: add them under 'lists:'"
                : hint.isEmpty ? "; the lists are \(lists.keys.sorted().map { "$" + $0 }.joined(separator: ", "))" : ""
            reader.error("unknown-list", "unknown list '$\(name)'\(hint)\(known)", at: item.node)
            return []
        }
        return list.items
    }

    private func keywordID(_ raw: String, _ normal: String, _ matching: WordMatching) -> Int {
        // Accented keywords match only accented text, the others any: they are different keys.
        // ASCII has no accents, and most keywords are ASCII: skip the Unicode work for them.
        // A keyword matching by form or typo is another key again than the same words exactly.
        let key = (normal.utf8.allSatisfy({ $0 < 0x80 }) ? normal + "\u{0}f"
            : Normalizer.hasAccent(raw) ? normal : Normalizer.foldAccents(normal) + "\u{0}f") + "\u{0}\(matching.rawValue)"
        if let id = keywordIDs[key] { return id }
        keywordTexts.append(raw)
        keywordMatching.append(matching)
        keywordIDs[key] = keywordTexts.count - 1
        return keywordTexts.count - 1
    }

    /// One entry of a keyword list: a word or phrase, or `{exact: WORD}` for one that matches
    /// only as written.
    struct KeywordItem {
        var text: String
        var node: YAMLNode
        var exact: Bool
    }

    /// The entries of a keyword list (or one entry on its own).
    private func keywordItems(_ reader: NodeReader, _ node: YAMLNode, _ what: String) -> [KeywordItem]? {
        guard let entries = node.sequence else {
            if node.mapping != nil {
                reader.error("wrong-type", "expected a list for \(what), found a mapping", at: node)
                return nil
            }
            return reader.text(node, what).map { [KeywordItem(text: $0, node: node, exact: false)] }
        }
        var out: [KeywordItem] = []
        let errorsBefore = reader.diagnostics.count
        for entry in entries {
            guard entry.mapping != nil else {
                if let s = reader.text(entry, "an item of \(what)") { out.append(KeywordItem(text: s, node: entry, exact: false)) }
                continue
            }
            guard let m = reader.mapping(entry, "an item of \(what) (a word, or {exact: WORD})", allowed: Self.exactKeywordKeys),
                  let value = reader.require(m["exact"], "exact", in: entry, "this item", example: "- {exact: card}"),
                  let s = reader.text(value, "'exact'") else { continue }
            out.append(KeywordItem(text: s, node: value, exact: true))
        }
        // A bad `{exact: …}` entry was reported: the list is not used (a rule without the word
        // would match differently than written).
        return reader.diagnostics.count == errorsBefore || entries.allSatisfy({ $0.mapping == nil }) ? out : nil
    }

    private func compilePattern(_ reader: NodeReader, _ source: String, _ node: YAMLNode) -> Int? {
        warnIfEscapesWereEaten(reader, source, node)
        if let id = patternIDs[source] { return id }
        do {
            let p = try Pattern(source, limits: patternLimits)
            patterns.append(p)
            patternLocations.append(node.location)
            patternIDs[source] = patterns.count - 1
            if p.matchesEmpty {
                reader.warning("regex-matches-empty", "this regex matches the empty string, so it matches every message; make part of it required (use + instead of *)", at: node)
            }
            if let risk = p.backtrackingRisk {
                reader.warning("catastrophic-regex", risk.advice, at: node)
            }
            return patterns.count - 1
        } catch {
            reader.report(.error("invalid-regex", "invalid regular expression: \(error.message)",
                                 at: reader.location(ofOffset: error.offset, in: node)))
            return nil
        }
    }

    /// Inside double quotes YAML reads `\b` as a backspace (and `\t`, `\e`, `\0`, … as control
    /// characters) before the regex sees it: `"\brefund\b"` becomes a pattern that never
    /// matches, and nothing else would say so. Warns at the first such character and shows the
    /// single-quoted form, where a backslash is the regex's own.
    private func warnIfEscapesWereEaten(_ reader: NodeReader, _ source: String, _ node: YAMLNode) {
        let scalars = source.unicodeScalars
        guard node.scalarStyle == .doubleQuoted, let first = scalars.firstIndex(where: Self.isControl) else { return }
        func escape(_ c: Unicode.Scalar) -> String {
            Self.controlEscapes[c.value].map { "\\" + $0.letter }
                ?? "\\x" + (c.value < 0x10 ? "0" : "") + String(c.value, radix: 16, uppercase: true)
        }
        var fixed = ""
        for c in scalars { if Self.isControl(c) { fixed += escape(c) } else { fixed.unicodeScalars.append(c) } }
        let bad = scalars[first]
        reader.report(.warning(
            "regex-in-double-quotes",
            "inside double quotes YAML turned '\(escape(bad))' into \(Self.controlEscapes[bad.value]?.name ?? "a control character") before the regex saw it; "
                + "write the regex in single quotes: '\(fixed.replacingOccurrences(of: "'", with: "''"))'",
            at: reader.location(ofOffset: scalars.distance(from: scalars.startIndex, to: first), in: node)))
    }

    private static func isControl(_ c: Unicode.Scalar) -> Bool { c.value < 0x20 || c.value == 0x7F }

    /// The YAML escapes that give control characters, by the character: the letter after the
    /// backslash, and what the regex gets instead of what was meant.
    private static let controlEscapes: [UInt32: (letter: String, name: String)] = [
        0x00: ("0", "a NUL character"), 0x07: ("a", "a bell character"),
        0x08: ("b", "a backspace (not a word boundary)"), 0x09: ("t", "a tab"), 0x0A: ("n", "a line break"),
        0x0B: ("v", "a vertical tab"), 0x0C: ("f", "a form feed"), 0x0D: ("r", "a carriage return"),
        0x1B: ("e", "an escape character"),
    ]

    /// `{any, all, none}` (the keys of `allowed`, in that order), or a list or single item as `any`;
    /// `items` reads each list.
    private func anyAllNone<Item>(_ reader: NodeReader, _ v: YAMLNode, _ what: String, allowed: [String],
                                  items: (NodeReader, YAMLNode, String) -> [Item]?)
        -> (any: [Item], all: [Item], none: [Item])? {
        guard v.mapping != nil else {
            guard let items = items(reader, v, what) else { return nil }
            return (items, [], [])
        }
        guard let m = reader.mapping(v, what, allowed: allowed) else { return nil }
        if m.isEmpty, v.mapping?.isEmpty == true {
            reader.error("empty-condition", "\(what) needs 'any', 'all' or 'none'", at: v)
            return nil
        }
        var ok = !m.isEmpty
        func list(_ key: String) -> [Item] {
            guard let n = m[key] else { return [] }
            guard let items = items(reader, n, "'\(key)'") else { ok = false; return [] }
            return items
        }
        let result = (list("any"), list("all"), list("none"))
        return ok ? result : nil
    }

    private func countRange(_ reader: NodeReader, _ v: YAMLNode, _ key: String) -> CountRange? {
        if v.scalar != nil {
            return reader.integer(v, "'\(key)'", in: 0...Int.max).map { CountRange(lower: $0, upper: $0) }
        }
        guard let m = reader.mapping(v, "'\(key)'", allowed: Self.countKeys) else { return nil }
        var range = CountRange()
        var ok = !m.isEmpty
        if m.isEmpty {
            reader.error("empty-condition", "'\(key)' needs a number, 'at_least', 'at_most' or 'between: [a, b]'", at: v)
        }
        if let n = m["at_least"] {
            if let x = reader.integer(n, "'at_least'", in: 0...Int.max) { range.lower = x } else { ok = false }
        }
        if let n = m["at_most"] {
            if let x = reader.integer(n, "'at_most'", in: 0...Int.max) { range.upper = x } else { ok = false }
        }
        if let n = m["between"] {
            if m["at_least"] != nil || m["at_most"] != nil {
                reader.error("conflicting-keys", "use either 'between' or 'at_least'/'at_most', not both", at: n)
                ok = false
            } else if let items = n.sequence, items.count == 2 {
                let a = reader.integer(items[0], "the first bound of 'between'", in: 0...Int.max)
                let b = reader.integer(items[1], "the second bound of 'between'", in: 0...Int.max)
                if let a, let b {
                    if a > b {
                        reader.error("out-of-range", "'between: [\(a), \(b)]' is empty; write the smaller number first", at: n)
                        ok = false
                    } else { range = CountRange(lower: a, upper: b) }
                } else { ok = false }
            } else {
                reader.error("wrong-type", "expected 'between' as a list of two numbers, like [2, 5]", at: n)
                ok = false
            }
        }
        if ok, range.isEmpty {
            reader.error("out-of-range", "'\(key)' can never hold: at_least \(range.lower) is more than at_most \(range.upper ?? 0)", at: v)
            ok = false
        }
        return ok ? range : nil
    }

    private func timeRange(_ reader: NodeReader, _ v: YAMLNode, _ key: String) -> TimeRange? {
        if v.scalar != nil {
            return reader.duration(v, "'\(key)'").map { TimeRange(atLeast: $0) }
        }
        guard let m = reader.mapping(v, "'\(key)'", allowed: Self.timeRangeKeys) else { return nil }
        var r = TimeRange()
        var ok = true
        if let n = m["at_least"] { if let d = reader.duration(n, "'at_least'") { r.atLeast = d } else { ok = false } }
        if let n = m["at_most"] { if let d = reader.duration(n, "'at_most'") { r.atMost = d } else { ok = false } }
        return ok ? r : nil
    }

    // MARK: Actions

    func compileActions(_ reader: NodeReader, _ node: YAMLNode, captures: Set<String>?, context: String) -> [Action]? {
        let items: [YAMLNode]
        if let seq = node.sequence { items = seq } else if node.mapping != nil { items = [node] } else {
            reader.error("wrong-type", "expected the actions of \(context) as a list, like '- reply: \"…\"', found \(node.kindName)", at: node)
            return nil
        }
        if items.isEmpty {
            reader.error("no-actions", "\(context) has no actions; add at least one, like '- reply: \"…\"'", at: node)
            return nil
        }
        let templates = TemplateParser(reader: reader, captures: captures, context: context)
        var actions: [Action] = []
        var ok = true
        for item in items {
            guard let pairs = item.mapping else {
                reader.error("wrong-type", "each action is one 'key: value', like '- reply: \"…\"', found \(item.kindName)", at: item)
                ok = false
                continue
            }
            if pairs.count == 2, let reply = pairs.first(where: { $0.key.scalar == "reply" }),
               let quick = pairs.first(where: { $0.key.scalar == "quick_replies" }) {
                reader.error("action-shape", Self.quickRepliesBeside(reply: reply.value, quick.value, reader), at: quick.key)
                ok = false
                continue
            }
            guard pairs.count == 1 else {
                reader.error("action-shape", "each action is a separate list item with one key; start each of \(pairs.compactMap(\.key.scalar).map { "'\($0)'" }.joined(separator: ", ")) on its own '- ' line", at: item)
                ok = false
                continue
            }
            let key = pairs[0].key.scalar ?? ""
            let v = pairs[0].value
            guard let kind = ActionKind.byKey[key] else {
                if key == "quick_replies" {
                    reader.error("unknown-action", Self.quickRepliesBelong(perLanguage: false), at: pairs[0].key)
                    ok = false
                    continue
                }
                let misplaced = Self.ruleKeys.contains(key) ? "; '\(key)' is a rule option: move it out of 'then', level with 'when'" : "; actions are: \(ActionKind.keys.joined(separator: ", "))"
                reader.error("unknown-action", "unknown action '\(key)'" + (Suggestion.closest(to: key, in: ActionKind.keys).map { "; did you mean '\($0)'?" } ?? misplaced), at: pairs[0].key)
                ok = false
                continue
            }
            if let a = compileActionValue(reader, kind, v, templates) { actions.append(a) } else { ok = false }
        }
        return ok ? actions : nil
    }

    /// A text, `[variants]`, `{sequence: […]}` or `{text | sequence, quick_replies}`.
    private func compileReply(_ reader: NodeReader, _ v: YAMLNode, _ key: String, _ templates: TemplateParser) -> Reply? {
        guard v.mapping != nil else { return compileTexts(reader, v, "'\(key)'", templates).map { Reply($0) } }
        guard let m = reader.mapping(v, "'\(key)'", allowed: Self.replyKeys,
                                     explain: { Self.misplacedInReply($0, reader) }) else { return nil }
        var form: Reply.Form?
        switch (m["text"], m["sequence"]) {
        case (nil, nil):
            reader.error("missing-key", "this reply needs 'text' or 'sequence'; add a line like 'text: \"…\"'", at: v)
        case (_?, let sequence?):
            reader.error("conflicting-keys", "a reply has either 'text' or 'sequence', not both", at: sequence)
        case let (text?, nil):
            form = compileTexts(reader, text, "'text'", templates)
        case let (nil, sequence?):
            if let items = sequence.sequence, !items.isEmpty {
                let ts = items.compactMap { n in reader.text(n, "a sequence text").flatMap { templates.parse($0, n) } }
                if ts.count == items.count { form = .sequence(ts) }
            } else {
                reader.error("wrong-type", "expected 'sequence' as a list of texts", at: sequence)
            }
        }
        var quickReplies: [QuickReplyTemplate] = []
        if let n = m["quick_replies"] {
            guard let items = compileQuickReplies(reader, n, templates) else { return nil }
            quickReplies = items
        }
        return form.map { Reply($0, quickReplies: quickReplies) }
    }

    /// A text, or a list of texts used in turn.
    private func compileTexts(_ reader: NodeReader, _ v: YAMLNode, _ what: String, _ templates: TemplateParser) -> Reply.Form? {
        func template(_ n: YAMLNode, _ what: String) -> Template? {
            reader.text(n, what).flatMap { templates.parse($0, n) }
        }
        guard let items = v.sequence else { return template(v, what).map { .text($0) } }
        if items.isEmpty {
            reader.error("no-actions", "\(what) lists no texts", at: v)
            return nil
        }
        let ts = items.compactMap { template($0, "a reply variant") }
        return ts.count == items.count ? (items.count == 1 ? .text(ts[0]) : .variants(ts)) : nil
    }

    /// `quick_replies: [Track my order, {title: Returns, url: "https://…"}]`: buttons (a text, or
    /// `{title}`) and links (`{title, url}`), each URL checked (`QuickReplyTemplate.problem`).
    private func compileQuickReplies(_ reader: NodeReader, _ v: YAMLNode, _ templates: TemplateParser) -> [QuickReplyTemplate]? {
        let example = "[Track my order, {title: Returns policy, url: \"https://shop.example/returns\"}]"
        let items: [YAMLNode]
        if let seq = v.sequence {
            items = seq
        } else if v.scalar != nil, !v.isNull {
            items = [v]
        } else {
            reader.error("wrong-type", v.isNull ? "'quick_replies' lists nothing; remove it, or list buttons and links like \(example)"
                : "expected 'quick_replies' as a list of buttons and links, like \(example), found \(v.kindName)", at: v)
            return nil
        }
        if items.isEmpty {
            reader.error("wrong-type", "'quick_replies' lists nothing; remove it, or list buttons and links like \(example)", at: v)
            return nil
        }
        var out: [QuickReplyTemplate] = []
        var seen: [String: YAMLNode] = [:]
        var ok = true
        for item in items {
            var titleNode = item
            var urlNode: YAMLNode?
            if item.mapping != nil {
                guard let m = reader.mapping(item, "a quick reply", allowed: Self.quickReplyKeys),
                      let t = reader.require(m["title"], "title", in: item, "a quick reply", example: "title: Track my order") else { ok = false; continue }
                titleNode = t
                urlNode = m["url"]
            } else if item.sequence != nil {
                reader.error("wrong-type", "expected a button's text or a link {title, url} in 'quick_replies', found a list", at: item)
                ok = false
                continue
            }
            guard let text = reader.text(titleNode, "a quick reply's title") else { ok = false; continue }
            guard !text.allSatisfy(\.isWhitespace) else {
                reader.error("wrong-type", "a quick reply's title is empty; write what the button says", at: titleNode)
                ok = false
                continue
            }
            guard let title = templates.parse(text, titleNode) else { ok = false; continue }
            var url: Template?
            if let urlNode {
                guard let source = reader.text(urlNode, "'url'"), let parsed = templates.parse(source, urlNode) else { ok = false; continue }
                if let problem = QuickReplyTemplate.problem(inURL: source) {
                    reader.report(.error("invalid-url", problem.message, at: reader.location(ofOffset: problem.offset, in: urlNode)))
                    ok = false
                    continue
                }
                url = parsed
            }
            if let first = seen[text] {
                reader.warning("duplicate-quick-reply", "'\(text)' is offered twice in this reply", at: titleNode,
                               notes: [.init("first offered here", at: first.location)])
            } else {
                seen[text] = titleNode
            }
            out.append(QuickReplyTemplate(title: title, url: url))
        }
        return ok ? out : nil
    }

    /// `quick_replies` beside the languages of a reply, or as an action of its own: where it
    /// belongs instead.
    static func quickRepliesBelong(perLanguage: Bool) -> String {
        perLanguage
            ? "quick replies are given per language, inside each language's reply: 'en: {text: \"…\", quick_replies: […]}'"
            : "'quick_replies' is part of a reply, not an action of its own: write 'reply: {text: \"…\", quick_replies: […]}'"
    }

    /// `- reply: "…"` with `quick_replies:` beside it in the same item: they go inside the
    /// reply, written out when both fit on a line.
    static func quickRepliesBeside(reply: YAMLNode, _ quick: YAMLNode, _ reader: NodeReader) -> String {
        if let pairs = reply.mapping, LanguageMap.isPerLanguage(pairs, ownKeys: ["text", "sequence"]) {
            return quickRepliesBelong(perLanguage: true)
        }
        let head = "'quick_replies' belongs inside the reply, not beside it"
        guard reply.mapping == nil, let text = reader.written(reply), let buttons = reader.written(quick) else {
            return head + ": write 'reply: {text: \"…\", quick_replies: […]}'"
        }
        return head + ": write 'reply: {text: \(text), quick_replies: \(buttons)}'"
    }

    /// The message for an unknown key in a reply written as a mapping: a language code mixed
    /// with `text` or `sequence`.
    static func misplacedInReply(_ pair: YAMLPair, _ reader: NodeReader) -> String? {
        guard let key = pair.key.scalar, BotFileParser.isLanguageCode(key) else { return nil }
        return "'\(key)' is a language, and a reply is either per language or 'text'/'sequence': write 'reply: {\(key): {text: \"…\"}, …}'"
    }

    /// `reply: {en: …, es: …}`: a reply per language code, each in one of the other forms, with
    /// its own quick replies. Checked against the bot's languages (`LanguageMap`); a language
    /// with quick replies beside one without is a warning.
    private func compileLanguageReplies(_ reader: NodeReader, _ v: YAMLNode, _ pairs: [YAMLPair],
                                        _ templates: TemplateParser) -> [LanguageReply]? {
        let forms = "a text, a list of texts, {sequence: […]} or {text: …, quick_replies: […]}"
        guard let values = LanguageMap.read(reader, v, pairs, what: "a reply", forms: forms, languages: languages,
                                            misplaced: { $0 == "quick_replies" ? Self.quickRepliesBelong(perLanguage: true) : nil },
                                            { compileReply(reader, $1, $0, templates) }) else { return nil }
        let replies = values.map { LanguageReply(language: $0.language, reply: $0.value) }
        if let with = replies.first(where: { !$0.reply.quickReplies.isEmpty }) {
            let without = replies.filter { $0.reply.quickReplies.isEmpty }.map(\.language)
            if !without.isEmpty {
                reader.warning("missing-quick-replies", "the '\(with.language)' reply has quick replies and \(without.map { "'\($0)'" }.joined(separator: ", ")) \(without.count == 1 ? "has" : "have") none: \(without.count == 1 ? "its" : "their") customers get no buttons; add quick_replies to \(without.count == 1 ? "it" : "them")", at: v)
            }
        }
        return replies
    }

    /// Compiles the value of one action by the shape its declaration gives it.
    private func compileActionValue(_ reader: NodeReader, _ kind: ActionKind, _ v: YAMLNode, _ templates: TemplateParser) -> Action? {
        func template(_ n: YAMLNode, _ what: String) -> Template? {
            reader.text(n, what).flatMap { templates.parse($0, n) }
        }
        let key = kind.key
        switch kind.value {
        case .reply:
            if let pairs = v.mapping, LanguageMap.isPerLanguage(pairs, ownKeys: ["text", "sequence"]) {
                return compileLanguageReplies(reader, v, pairs, templates).map { .reply(Reply(.languages($0))) }
            }
            return compileReply(reader, v, key, templates).map(Action.reply)
        case let .notice(make):
            return templates.localized(v, "'\(key)'", languages: languages).map(make)
        case .handoff:
            if v.isNull { return .handoff(Handoff(reason: "")) }
            guard let m = reader.mapping(v, "'\(key)'", allowed: Self.handoffKeys) else { return nil }
            var h = Handoff(reason: "")
            var ok = true
            if let n = m["reason"] { if let s = reader.text(n, "'reason'") { h.reason = s } else { ok = false } }
            if let n = m["queue"] { if let s = reader.text(n, "'queue'") { h.queue = s } else { ok = false } }
            if let n = m["priority"], let s = reader.text(n, "'priority'") {
                if let p = HandoffPriority(rawValue: s) { h.priority = p } else {
                    reader.error("invalid-value", "unknown handoff priority '\(s)'" + Suggestion.hint(for: s, in: HandoffPriority.allCases.map(\.rawValue), otherwise: "use low, normal, high or urgent"), at: n)
                    ok = false
                }
            }
            if let n = m["message"] { if let t = templates.localized(n, "'message'", languages: languages) { h.message = t } else { ok = false } }
            return ok ? .handoff(h) : nil
        case let .tagName(make):
            return reader.text(v, "'\(key)'").map(make)
        case .notify:
            if v.scalar != nil { return template(v, "'\(key)'").map { .notify(text: $0, queue: nil) } }
            guard let m = reader.mapping(v, "'\(key)'", allowed: Self.notifyKeys),
                  let tn = reader.require(m["text"], "text", in: v, "'\(key)'", example: "text: \"VIP customer waiting\""),
                  let t = template(tn, "'text'") else { return nil }
            let queue = m["queue"].flatMap { reader.text($0, "'queue'") }
            return .notify(text: t, queue: queue)
        case .metadata:
            guard let pairs = v.mapping, !pairs.isEmpty else {
                reader.error("wrong-type", "expected '\(key)' as a mapping of keys to values, like '{plan: premium}', found \(v.kindName)", at: v)
                return nil
            }
            var entries: [MetadataEntry] = []
            for pair in pairs {
                guard let k = pair.key.scalar, let t = template(pair.value, "'\(k)'") else { return nil }
                entries.append(MetadataEntry(key: k, value: t))
            }
            return .set(entries)
        }
    }
}
