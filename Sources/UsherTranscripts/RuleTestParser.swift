public import UsherDiagnostics
public import UsherRules
import UsherYAML
import Foundation

/// What loading a test file produced: the suite when the file has no errors, every diagnostic,
/// the file's text for printing them, and how many tests it declares (counted even when it has
/// errors, so a runner can count them as failed).
public struct RuleTestLoadResult: Sendable {
    /// The tests, or `nil` when the file has errors (a file with errors runs none of its tests).
    public let suite: RuleTestSuite?
    /// Errors and warnings, in file order.
    public let diagnostics: [Diagnostic]
    /// The file's text, when it could be read.
    public let source: SourceText?
    /// The number of entries of `tests:` (0 when there is no readable list).
    public let testCount: Int
}

extension RuleTestSuite {
    /// Reads and checks the test file at `path` against `bot`, the rule set its tests run
    /// against: rule ids, handoff reasons, tags and metadata keys that the bot can never produce
    /// are errors, with a suggestion. With `bot` `nil` (a bot that does not load) only the
    /// file's shape is checked and times without an offset are read in UTC.
    public static func load(path: String, bot: RuleSet?) -> RuleTestLoadResult {
        let (document, diagnostics) = YAMLLoader.loadFile(path: path)
        return load(document, diagnostics, bot: bot)
    }

    /// Parses a test file's `text`, named `path` in diagnostics; see `load(path:bot:)`.
    public static func load(path: String, text: String, bot: RuleSet?) -> RuleTestLoadResult {
        let (document, diagnostics) = YAMLLoader.load(path: path, text: text)
        return load(document, diagnostics, bot: bot)
    }

    private static func load(_ document: YAMLDocument?, _ yaml: [Diagnostic], bot: RuleSet?) -> RuleTestLoadResult {
        // An alias stands in the tree as an empty value, a too-deep file is cut short: checking
        // their meaning would report the same mistake again in other words.
        guard let document, let root = document.root,
              !yaml.contains(where: { $0.code == "alias" || $0.code == "too-deep" })
        else { return RuleTestLoadResult(suite: nil, diagnostics: yaml, source: document?.source, testCount: 0) }
        let reader = RuleTestReader(document: document)
        let parser = RuleTestParser(reader: reader, bot: bot)
        let (tests, count) = parser.parseFile(root)
        let diagnostics = yaml + reader.diagnostics.sortedForDisplay()
        let suite = diagnostics.hasErrors ? nil : RuleTestSuite(path: document.path, source: document.source, tests: tests)
        return RuleTestLoadResult(suite: suite, diagnostics: diagnostics, source: document.source, testCount: count)
    }
}

/// Turns a test file's nodes into tests, checking every name against the bot.
struct RuleTestParser {
    let reader: RuleTestReader
    let bot: RuleSet?
    let calendar: Calendar
    /// What the bot can produce, for "did you mean" (empty without a bot: not checked).
    private let ruleIDs: [String]
    private let reasons: [String]
    private let tagNames: [String]
    private let metadataKeys: [String]

    static let fileKeys = ["tests"]
    static let testKeys = ["name", "start", "conversation_id", "channel", "locale", "customer_name", "tags", "conversation"]
    static let stepKeys = ["customer", "agent", "wait", "expect"]
    static let expectKeys = ["rule", "reply", "quick_replies", "system", "handoff", "tags", "notify", "metadata"]
    static let quickReplyKeys = ["title", "url"]

    init(reader: RuleTestReader, bot: RuleSet?) {
        self.reader = reader
        self.bot = bot
        if let bot {
            calendar = bot.bot.calendar
        } else {
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            calendar = utc
        }
        var reasons: [String] = [], tags: [String] = [], keys: [String] = []
        for action in (bot?.rules.flatMap(\.actions) ?? []) + (bot?.fallback ?? []) {
            switch action {
            case let .handoff(h): reasons.append(h.reason)
            case let .tag(t): tags.append(t)
            case let .set(entries): keys += entries.map(\.key)
            default: break
            }
        }
        if bot?.bot.maxBotReplies != nil { reasons.append("max-bot-replies") }
        if bot?.bot.loopGuard != nil { reasons.append("loop-guard") }
        ruleIDs = (bot?.rules.map(\.id) ?? []) + (bot?.fallback != nil ? ["fallback"] : [])
        self.reasons = Self.unique(reasons)
        tagNames = Self.unique(tags)
        metadataKeys = Self.unique(keys)
    }

    private var botName: String { "bot '\(bot?.bot.id ?? "?")'" }

    // MARK: File and tests

    /// The tests (those without errors) and the number of entries of `tests:`.
    func parseFile(_ root: YAMLNode) -> ([RuleTest], Int) {
        guard let top = reader.fields(of: root, "a test file", keys: Self.fileKeys)?.byKey else { return ([], 0) }
        guard let list = top["tests"] else {
            if reader.hasMisspelling(of: ["tests"], in: root, allowed: Self.fileKeys) { return ([], 0) }
            reader.error("missing-key", "a test file needs 'tests:', a list of tests; see docs/rule-tests.md", at: root)
            return ([], 0)
        }
        guard let items = list.value.sequence else {
            reader.error("wrong-type", "expected a list of tests for 'tests' (each starting with '- name:'), found \(list.value.kindName)", at: list.value)
            return ([], 0)
        }
        if items.isEmpty { reader.warning("no-tests", "the file has no tests", at: list.value, notes: []) }
        var tests: [RuleTest] = []
        var seen: [String: YAMLNode] = [:]
        for item in items {
            guard let (test, nameNode) = parseTest(item) else { continue }
            if let first = seen[test.name] {
                reader.warning("duplicate-test-name", "another test in this file is named '\(test.name)'; give each test its own name, so failures and --filter can tell them apart",
                               at: nameNode, notes: [.init("the first one is here", at: first.location)])
            } else {
                seen[test.name] = nameNode
            }
            tests.append(test)
        }
        return (tests, items.count)
    }

    private func parseTest(_ node: YAMLNode) -> (RuleTest, YAMLNode)? {
        guard let f = reader.fields(of: node, "a test", keys: Self.testKeys)?.byKey else { return nil }
        let errorsBefore = reader.diagnostics.count { $0.severity == .error }
        var name: String?
        if let n = f["name"] { name = reader.string(n.value, "'name'") } else if !misspelt("name", node) {
            reader.error("missing-key", "a test needs 'name'; add a line like 'name: refund once per session'", at: node)
        }
        var start = RuleTestTime.defaultStart(in: calendar)
        if let s = f["start"], let text = reader.string(s.value, "'start'") {
            switch RuleTestTime.parse(text, in: calendar) {
            case let .success(date): start = date
            case let .failure(problem): reader.error("invalid-time", problem.message, at: s.value)
            }
        }
        let conversationID = f["conversation_id"].flatMap { reader.string($0.value, "'conversation_id'") }
        let channel = f["channel"].flatMap { reader.string($0.value, "'channel'") }
        let locale = f["locale"].flatMap { reader.string($0.value, "'locale'") }
        let customerName = f["customer_name"].flatMap { reader.string($0.value, "'customer_name'") }
        let tags = f["tags"].flatMap { reader.strings($0.value, "'tags'") }?.map(\.text) ?? []

        var steps: [RuleTestStep] = []
        if let c = f["conversation"] {
            if let items = c.value.sequence {
                if items.isEmpty {
                    reader.error("empty-conversation", "'conversation' has no steps; add messages like '- customer: \"hello\"'", at: c.value)
                }
                steps = items.compactMap { parseStep($0, initialTags: tags) }
            } else {
                reader.error("wrong-type", "expected a list of steps for 'conversation' (each starting with '- customer:', '- agent:' or '- wait:'), found \(c.value.kindName)", at: c.value)
            }
        } else if !misspelt("conversation", node) {
            reader.error("missing-key", "a test needs 'conversation', the list of its messages; add a line like 'conversation:' followed by '- customer: \"hello\"'", at: node)
        }
        guard let name, let nameNode = f["name"]?.value,
              reader.diagnostics.count(where: { $0.severity == .error }) == errorsBefore
        else { return nil }
        let test = RuleTest(name: name, location: node.location, start: start,
                            conversationID: conversationID ?? RuleTest.defaultConversationID,
                            channel: channel, locale: locale, customerName: customerName, tags: tags, steps: steps)
        return (test, nameNode)
    }

    private func misspelt(_ key: String, _ test: YAMLNode) -> Bool {
        reader.hasMisspelling(of: [key], in: test, allowed: Self.testKeys)
    }

    // MARK: Steps

    private func parseStep(_ node: YAMLNode, initialTags: [String]) -> RuleTestStep? {
        let kinds = "'customer: TEXT', 'agent: TEXT', 'wait: DURATION' or the word 'close'"
        if let word = node.scalar, !node.isNull {
            if word == "close" { return RuleTestStep(action: .close, location: node.location) }
            let help = Suggestion.closest(to: word, in: ["close"]) != nil ? "did you mean 'close'?" : "a step is \(kinds)"
            reader.error("invalid-step", "'\(word)' is not a step; \(help)", at: node)
            return nil
        }
        guard let (byKey, order) = reader.fields(of: node, "a step", keys: Self.stepKeys) else { return nil }
        let messages = order.filter { $0.key != "expect" }
        if messages.count > 1 {
            reader.error("conflicting-step", "this step has both '\(messages[0].key)' and '\(messages[1].key)'; a step is one message or one wait, so put each on its own '- ' line",
                         at: messages[1].keyNode)
            return nil
        }
        guard let kind = messages.first else {
            if reader.hasMisspelling(of: ["customer", "agent", "wait"], in: node, allowed: Self.stepKeys) { return nil }
            let expectHint = byKey["expect"] != nil ? "; 'expect' belongs in the step of the customer message it checks" : ""
            reader.error("empty-step", "this step has no message: a step is \(kinds)\(expectHint)", at: node)
            return nil
        }
        let action: RuleTestStep.Action
        switch kind.key {
        case "customer":
            guard let text = reader.string(kind.value, "'customer'") else { return nil }
            action = .customer(text)
        case "agent":
            guard let text = reader.string(kind.value, "'agent'") else { return nil }
            action = .agent(text)
        default:
            guard let text = reader.string(kind.value, "'wait'") else { return nil }
            guard let seconds = DurationText.parse(text) else {
                reader.error("invalid-duration", "'\(text)' is not a duration for 'wait'; write a number and a unit: 30s, 10m, 2h, 1d (or 1h30m)", at: kind.value)
                return nil
            }
            action = .wait(seconds)
        }
        var expectation: RuleTestExpectation?
        if let e = byKey["expect"] {
            guard kind.key == "customer" else {
                let why = kind.key == "agent"
                    ? "the bot never answers an agent's message (it goes silent for the session)"
                    : "a wait sends no message"
                reader.error("misplaced-expect", "'expect' checks the bot's answer to a customer message, and \(why); put it under a 'customer:' step",
                             at: e.keyNode)
                return nil
            }
            guard let parsed = parseExpectation(e.value, initialTags: initialTags) else { return nil }
            expectation = parsed
        }
        return RuleTestStep(action: action, expectation: expectation, location: node.location)
    }

    // MARK: Expectations

    private func parseExpectation(_ node: YAMLNode, initialTags: [String]) -> RuleTestExpectation? {
        let shape = "write 'silent', or what the bot should do, like {rule: opening, reply: \"Hi there!\"}"
        switch node.content {
        case .sequence:
            reader.error("wrong-type", "expected 'silent' or a mapping for 'expect', found a list; \(shape)", at: node)
            return nil
        case let .scalar(word, _):
            if node.isNull {
                reader.error("empty-expect", "'expect' is empty; \(shape)", at: node)
            } else if word == "silent" {
                return RuleTestExpectation(silent: true)
            } else {
                let help = Suggestion.closest(to: word, in: ["silent"]) != nil ? "did you mean 'silent'?" : shape
                reader.error("invalid-expect", "'\(word)' is not an expectation; \(help)", at: node)
            }
            return nil
        case let .mapping(pairs):
            if let silent = pairs.first(where: { $0.key.scalar == "silent" }) {
                reader.error("invalid-expect", "'silent' is a word on its own: write 'expect: silent' (or 'reply: []' to check that there is no reply)", at: silent.key)
                return nil
            }
            guard let f = reader.fields(of: node, "'expect'", keys: Self.expectKeys)?.byKey else { return nil }
            if f.isEmpty {
                if pairs.isEmpty { reader.error("empty-expect", "'expect' checks nothing; \(shape)", at: node) }
                return nil
            }
            let errorsBefore = reader.diagnostics.count { $0.severity == .error }
            var e = RuleTestExpectation()
            if let r = f["rule"] { e.rules = ruleIDs(r.value) }
            if let r = f["reply"] { e.replies = texts(r.value, "'reply'") }
            if let s = f["system"] { e.system = texts(s.value, "'system'") }
            if let n = f["notify"] { e.notify = texts(n.value, "'notify'") }
            if let h = f["handoff"] { e.handoff = handoff(h.value) }
            if let t = f["tags"] { e.tags = tags(t.value, initialTags: initialTags) }
            if let m = f["metadata"] { e.metadata = metadata(m.value) }
            if let q = f["quick_replies"] { e.quickReplies = quickReplies(q.value) }
            return reader.diagnostics.count(where: { $0.severity == .error }) == errorsBefore ? e : nil
        }
    }

    private func ruleIDs(_ node: YAMLNode) -> [String]? {
        guard let items = reader.strings(node, "'rule'") else { return nil }
        for (id, item) in items where bot != nil && !ruleIDs.contains(id) {
            if id == "fallback" {
                reader.error("unknown-rule", "\(botName) has no fallback, so 'fallback' never fires", at: item)
            } else {
                reader.error("unknown-rule", "\(botName) has no rule '\(id)'\(known(id, in: ruleIDs, "its rules are"))", at: item)
            }
        }
        return items.map(\.text)
    }

    private func texts(_ node: YAMLNode, _ what: String) -> RuleTestTexts? {
        if let items = node.sequence {
            let parsed = items.compactMap { text($0, "an item of \(what)") }
            return parsed.count == items.count ? .exactly(parsed) : nil
        }
        if node.mapping != nil {
            reader.error("wrong-type", "expected a text, a /regex/ or a list of them for \(what), found a mapping", at: node)
            return nil
        }
        return text(node, what).map(RuleTestTexts.contains)
    }

    /// A text, or a pattern when written between slashes.
    private func text(_ node: YAMLNode, _ what: String) -> RuleTestText? {
        guard let s = reader.string(node, what) else { return nil }
        guard s.count >= 2, s.hasPrefix("/"), s.hasSuffix("/") else { return RuleTestText(exactly: s) }
        do {
            return try RuleTestText(pattern: String(s.dropFirst().dropLast()))
        } catch {
            reader.error("invalid-regex", "invalid regular expression: \(error.message)",
                         at: reader.location(ofOffset: error.offset + 1, in: node))
            return nil
        }
    }

    /// A title, `{title, url}`, or a list of them; each value a text or a `/regex/`.
    private func quickReplies(_ node: YAMLNode) -> RuleTestQuickReplies? {
        func item(_ n: YAMLNode) -> RuleTestQuickReplies.Item? {
            guard n.mapping != nil else { return text(n, "a quick reply's title").map { .init(title: $0) } }
            guard let f = reader.fields(of: n, "a quick reply", keys: Self.quickReplyKeys)?.byKey else { return nil }
            guard let t = f["title"] else {
                reader.error("missing-key", "a quick reply needs 'title'; write {title: Returns, url: \"https://…\"}", at: n)
                return nil
            }
            guard let title = text(t.value, "a quick reply's title") else { return nil }
            guard let u = f["url"] else { return .init(title: title) }
            return text(u.value, "a quick reply's url").map { .init(title: title, url: $0) }
        }
        if let items = node.sequence {
            let parsed = items.compactMap(item)
            return parsed.count == items.count ? .exactly(parsed) : nil
        }
        return item(node).map(RuleTestQuickReplies.contains)
    }

    private func handoff(_ node: YAMLNode) -> RuleTestExpectation.Handoff? {
        guard let s = reader.string(node, "'handoff'") else { return nil }
        switch s {
        case "true": return .handedOff
        case "false": return .notHandedOff
        case "yes", "on", "True", "TRUE", "no", "off", "False", "FALSE":
            let word = ["yes", "on", "True", "TRUE"].contains(s) ? "true" : "false"
            reader.error("wrong-type", "expected true, false or a handoff reason for 'handoff', found '\(s)'; write '\(word)'", at: node)
            return nil
        case "":
            reader.error("wrong-type", "'handoff' is empty; write true, false or the handoff's reason", at: node)
            return nil
        default:
            if bot != nil, !reasons.contains(s) {
                reader.error("unknown-handoff-reason", "\(botName) never hands off with reason '\(s)'\(known(s, in: reasons, "its reasons are"))", at: node)
                return nil
            }
            return .reason(s)
        }
    }

    private func tags(_ node: YAMLNode, initialTags: [String]) -> [String]? {
        guard let items = reader.strings(node, "'tags'") else { return nil }
        let possible = Self.unique(tagNames + initialTags)
        for (tag, item) in items where bot != nil && !possible.contains(tag) {
            reader.error("unknown-tag", "no rule of \(botName) sets tag '\(tag)'\(known(tag, in: possible, "the tags it sets are"))", at: item)
        }
        return items.map(\.text)
    }

    private func metadata(_ node: YAMLNode) -> [(key: String, value: RuleTestText)]? {
        guard let f = node.mapping else {
            reader.error("wrong-type", "expected 'key: value' lines for 'metadata', found \(node.kindName)", at: node)
            return nil
        }
        var out: [(key: String, value: RuleTestText)] = []
        for pair in f {
            guard let key = pair.key.scalar else { continue }
            if bot != nil, !metadataKeys.contains(key) {
                reader.error("unknown-metadata-key", "no rule of \(botName) sets metadata '\(key)'\(known(key, in: metadataKeys, "the keys it sets are"))", at: pair.key)
                continue
            }
            if let value = text(pair.value, "metadata '\(key)'") { out.append((key, value)) }
        }
        return out.count == f.count ? out : nil
    }

    /// `; did you mean 'x'?`, else the candidates (when there are a few), else nothing.
    private func known(_ word: String, in candidates: [String], _ label: String) -> String {
        if let close = Suggestion.closest(to: word, in: candidates) { return "; did you mean '\(close)'?" }
        if candidates.isEmpty { return "" }
        if candidates.count > 24 { return "" }
        return "; \(label): \(candidates.joined(separator: ", "))"
    }

    private static func unique(_ items: [String]) -> [String] {
        var seen = Set<String>()
        return items.filter { seen.insert($0).inserted }
    }
}
