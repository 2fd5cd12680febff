public import Foundation
public import UsherDiagnostics
public import UsherEngine
import UsherRules
import UsherText
import UsherYAML

/// One test file of a bot (`bots/<bot>/tests/*.yaml`), parsed and checked against the bot:
/// its tests, in file order. Load one with `RuleTestSuite.load(path:bot:)`, run it with
/// `RuleTestRunner.run(_:ruleSet:)`. The format is described in docs/rule-tests.md.
public struct RuleTestSuite: Sendable {
    /// The file's path as the caller named it.
    public let path: String
    /// The file's text, for quoting diagnostics.
    public let source: SourceText
    /// The `tests:` entries, in file order.
    public let tests: [RuleTest]

    /// A suite; `load(path:bot:)` builds these from files.
    public init(path: String, source: SourceText, tests: [RuleTest]) {
        self.path = path
        self.source = source
        self.tests = tests
    }

    /// Every rule id some step expects to fire (`expect: {rule: …}`): what the suite covers.
    public var expectedRuleIDs: Set<String> {
        var ids = Set<String>()
        for test in tests {
            for step in test.steps { ids.formUnion(step.expectation?.rules ?? []) }
        }
        return ids
    }
}

/// One entry of `tests:`: a conversation played against the bot from a fresh state.
public struct RuleTest: Sendable {
    /// `name:`, unique within its file.
    public let name: String
    /// Where the entry starts (its first key).
    public let location: SourceLocation
    /// The virtual clock's time at the first step (`start:`, or the documented default).
    public let start: Date
    /// The conversation id the engine sees (`conversation_id:`, default `test`): it picks where
    /// `reply: [a, b, c]` variants start.
    public let conversationID: String
    /// The conversation's channel (`channel:`), as a backend would set it.
    public let channel: String?
    /// The conversation's locale (`locale:`), as a backend would set it.
    public let locale: String?
    /// The customer's name (`customer_name:`): the sender name of every customer message.
    public let customerName: String?
    /// Tags the conversation has before the first step (`tags:`).
    public let tags: [String]
    /// `conversation:`, in order.
    public let steps: [RuleTestStep]

    /// A test; the parser builds these from files.
    public init(name: String, location: SourceLocation, start: Date, conversationID: String = RuleTest.defaultConversationID,
                channel: String? = nil, locale: String? = nil, customerName: String? = nil, tags: [String] = [],
                steps: [RuleTestStep]) {
        self.name = name
        self.location = location
        self.start = start
        self.conversationID = conversationID
        self.channel = channel
        self.locale = locale
        self.customerName = customerName
        self.tags = tags
        self.steps = steps
    }

    /// The conversation id of a test without `conversation_id:`.
    public static let defaultConversationID = "test"

    /// Whether `filter` (case-insensitive) occurs in the name; every test matches `nil` or "".
    public func matches(filter: String?) -> Bool {
        guard let filter, !filter.isEmpty else { return true }
        return name.range(of: filter, options: [.caseInsensitive]) != nil
    }
}

/// One item of a test's `conversation:`.
public struct RuleTestStep: Sendable {
    /// What happens at this step.
    public enum Action: Sendable, Hashable {
        /// `customer: TEXT`: a customer message, decided by the engine.
        case customer(String)
        /// `agent: TEXT`: a human agent writes (the bot goes silent for the session).
        case agent(String)
        /// `wait: DURATION`: the virtual clock moves on, in seconds.
        case wait(TimeInterval)
        /// `close`: the backend closes or resolves the conversation (the next message starts a
        /// new session).
        case close
    }

    public let action: Action
    /// `expect:`; only customer steps have one, and it is optional.
    public let expectation: RuleTestExpectation?
    /// Where the step starts (its first key, or the word `close`).
    public let location: SourceLocation

    /// A step; the parser builds these from files.
    public init(action: Action, expectation: RuleTestExpectation? = nil, location: SourceLocation) {
        self.action = action
        self.expectation = expectation
        self.location = location
    }

    /// `customer "hello"`, `agent "Hi, I'm Li"`, `wait 25h`, `close`: for reports.
    public var summary: String {
        switch action {
        case let .customer(t): "customer \(RuleTestText.quote(t))"
        case let .agent(t): "agent \(RuleTestText.quote(t))"
        case let .wait(s): "wait \(DurationText.format(s))"
        case .close: "close"
        }
    }
}

/// What one customer step expects of the bot's decision. Every key that is set must hold;
/// keys that are not set are not checked.
public struct RuleTestExpectation: Sendable {
    /// `silent`: no reply, no system notice and no handoff (the other keys are then unset).
    public var silent: Bool
    /// `rule:`: exactly these rules fired, in firing order (`fallback` for the fallback; `[]`:
    /// none at all).
    public var rules: [String]?
    /// `reply:`: the bot's replies.
    public var replies: RuleTestTexts?
    /// `system:`: system notices (a handoff's message is one).
    public var system: RuleTestTexts?
    /// `handoff:`: whether the conversation was handed off, and why.
    public var handoff: Handoff?
    /// `tags:`: the conversation's tags after the step, as a set.
    public var tags: [String]?
    /// `notify:`: agent notifications (a handoff raises one when the bot's `handoff.notify`).
    public var notify: RuleTestTexts?
    /// `metadata:`: values of these metadata keys after the step (other keys are not checked).
    public var metadata: [(key: String, value: RuleTestText)]?
    /// `quick_replies:`: the buttons and links of the step's replies, in order.
    public var quickReplies: RuleTestQuickReplies?

    /// `handoff: true`, `handoff: false`, `handoff: REASON`.
    public enum Handoff: Sendable, Hashable {
        /// `true`: the step handed the conversation off, for any reason.
        case handedOff
        /// `false`: it did not.
        case notHandedOff
        /// A reason: it handed off with exactly this reason.
        case reason(String)
    }

    /// An expectation that checks nothing; set the keys to check.
    public init(silent: Bool = false) { self.silent = silent }
}

/// How `reply:`, `system:` and `notify:` are checked.
public enum RuleTestTexts: Sendable {
    /// A single text or `/regex/`: at least one of the step's texts of that kind matches it.
    case contains(RuleTestText)
    /// A list: the step's texts of that kind are exactly these, in order (`[]`: none at all).
    case exactly([RuleTestText])
}

/// How `quick_replies:` is checked: as `reply:` is, over the buttons and links of the step's
/// replies.
public enum RuleTestQuickReplies: Sendable {
    /// One item: at least one of the step's quick replies matches it.
    case contains(Item)
    /// A list: the step's quick replies are exactly these, in order (`[]`: none at all).
    case exactly([Item])

    /// `Track my order` (a title), or `{title: Returns, url: "https://…"}` (a link with this
    /// address); each a text or a `/regex/`.
    public struct Item: Sendable {
        public var title: RuleTestText
        /// Nil: any button or link with the title.
        public var url: RuleTestText?

        public init(title: RuleTestText, url: RuleTestText? = nil) {
            self.title = title
            self.url = url
        }

        /// Whether `item` has this title and, when one is expected, this address.
        public func matches(_ item: QuickReply) -> Bool {
            guard title.matches(item.title) else { return false }
            guard let url else { return true }
            return item.url.map(url.matches) ?? false
        }

        /// `"Track my order"`, `"Returns" → "https://…"`, as in reports.
        public var description: String { title.description + (url.map { " → " + $0.description } ?? "") }
    }
}

/// An expected text: written out, or a `/regex/` that must occur in the text.
public struct RuleTestText: Sendable {
    /// The text, or the pattern between the slashes.
    public let source: String
    private let pattern: Pattern?

    /// A text that must be equal.
    public init(exactly text: String) {
        source = text
        pattern = nil
    }

    /// A PCRE2 pattern (UTF and UCP mode, as in rule files) that must occur somewhere in the
    /// text; throws PCRE2's message and the offset of the mistake.
    init(pattern: String) throws(PatternError) {
        source = pattern
        self.pattern = try Pattern(pattern)
    }

    /// Whether this is a `/regex/`.
    public var isPattern: Bool { pattern != nil }

    /// Whether `text` is equal to it, or the pattern occurs in `text`.
    public func matches(_ text: String) -> Bool {
        guard let pattern else { return text == source }
        if case .match = pattern.match(text) { return true }
        return false
    }

    /// `"text"` or `/regex/`, as in reports.
    public var description: String { isPattern ? "/\(source)/" : Self.quote(source) }

    /// `"text"` with `"` and `\` escaped and line breaks shown as `\n`, for one-line reports.
    public static func quote(_ s: String) -> String {
        var out = "\""
        for ch in s {
            switch ch {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out.append(ch)
            }
        }
        return out + "\""
    }
}
