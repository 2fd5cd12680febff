/// With `--against`: every message on which the two bots decided differently, grouped by
/// transition ("refund → fallback"), with a few examples each.
public struct ReplayDiff: Sendable {
    /// One message on which the bots differ.
    public struct Example: Sendable {
        /// The conversation id.
        public var conversation: String
        /// Index into the conversation's steps.
        public var step: Int
        /// The customer message of the session, and the message's text.
        public var customerMessage: Int?
        public var text: String
        /// What the bot and the other bot decided.
        public var bot: ReplayOutcome
        public var against: ReplayOutcome
    }

    /// All differences from one outcome label to another.
    public struct Transition: Sendable {
        /// The bot's label (fired rules joined with `+`, `fallback`, `silent (waiting)`, …).
        public var from: String
        /// The other bot's label.
        public var to: String
        /// Messages and conversations with this transition, and the first few of them.
        public var messages = 0
        public var conversations = 0
        public var examples: [Example] = []

        /// `refund → fallback`; the same rules with other effects read `refund → refund (other effects)`.
        public var name: String { from == to ? "\(from) → \(to) (other effects)" : "\(from) → \(to)" }
    }

    private var byKey: [String: Transition] = [:]
    /// Messages, and conversations, on which the bots differ.
    public private(set) var messages = 0
    public private(set) var conversations = 0
    /// Messages both bots decided.
    public private(set) var compared = 0

    /// No differences yet.
    public init() {}

    /// Adds the differences of one conversation.
    public mutating func add(_ c: ReplayConversation, keepExamples: Int = 3) {
        var seen = Set<String>()
        for (i, step) in c.steps.enumerated() {
            guard let a = step.bot, let b = step.against else { continue }
            compared += 1
            guard !a.sameDecision(as: b) else { continue }
            messages += 1
            let key = a.label + "\u{0}" + b.label
            var t = byKey[key] ?? Transition(from: a.label, to: b.label)
            t.messages += 1
            if seen.insert(key).inserted { t.conversations += 1 }
            if t.examples.count < keepExamples, !t.examples.contains(where: { $0.conversation == c.id }) {
                t.examples.append(Example(conversation: c.id, step: i, customerMessage: a.customerMessage ?? b.customerMessage,
                                          text: step.message.text, bot: a, against: b))
            }
            byKey[key] = t
        }
        if !seen.isEmpty { conversations += 1 }
    }

    /// Transitions, most conversations first (then most messages, then by name).
    public var transitions: [Transition] {
        byKey.values.sorted {
            ($0.conversations, $0.messages) != ($1.conversations, $1.messages)
                ? ($0.conversations, $0.messages) > ($1.conversations, $1.messages)
                : $0.name < $1.name
        }
    }
}
