import Foundation
public import UsherEngine

/// One recorded message of a replayed conversation and what the bot (and, with `--against`,
/// the other bot) decided for it.
public struct ReplayStep: Sendable {
    /// The recorded message.
    public var message: Message
    /// 1-based line of the transcript it came from.
    public var line: Int
    /// The bot's decision; `nil` when the message was not given to the engine (an agent message
    /// with `--ignore-agents`).
    public var bot: ReplayOutcome?
    /// The other bot's decision (`--against`), under the same condition.
    public var against: ReplayOutcome?
    /// A human agent had already written in this session of the recording (no silence of
    /// `session.idle_reset` since): a bot message here would speak over a human.
    public var humanHadWritten: Bool

    /// A recorded message and the decisions for it.
    public init(message: Message, line: Int, bot: ReplayOutcome? = nil, against: ReplayOutcome? = nil,
                humanHadWritten: Bool = false) {
        self.message = message
        self.line = line
        self.bot = bot
        self.against = against
        self.humanHadWritten = humanHadWritten
    }

    /// The bot would have written to the customer although a human agent already had.
    public var spokeOverHuman: Bool { humanHadWritten && bot?.spoke == true }

    /// For a customer message given to the engine: its number in the session.
    public var customerMessage: Int? { bot?.customerMessage }

    /// With `--against`: the two bots decided differently (fired rules or effects).
    public var differs: Bool {
        guard let a = bot, let b = against else { return false }
        return !a.sameDecision(as: b)
    }
}

/// A handoff the bot would have made.
public struct ReplayHandoff: Sendable, Hashable {
    /// Index into `ReplayConversation.steps`.
    public var step: Int
    /// The customer message of the session that triggered it (1-based).
    public var customerMessage: Int
    /// The handoff's reason, and the rule (or `fallback`) that handed off.
    public var reason: String
    public var rule: String

    /// A handoff at `step`.
    public init(step: Int, customerMessage: Int, reason: String, rule: String) {
        self.step = step
        self.customerMessage = customerMessage
        self.reason = reason
        self.rule = rule
    }
}

/// One replayed conversation: every recorded message with the decisions for it.
public struct ReplayConversation: Sendable {
    /// The conversation id.
    public var id: String
    /// The transcript file and the line of its first message.
    public var file: String
    public var line: Int
    /// Which shape of transcript it came from.
    public var format: TranscriptFormat
    /// 1 normally; 2, 3, … when an events-shape conversation came back after its session had
    /// ended and its first part had already been reported.
    public var part: Int
    /// Every recorded message, in order, with the decisions for it.
    public var steps: [ReplayStep]

    /// A conversation that starts at `file:line`.
    public init(id: String, file: String, line: Int, format: TranscriptFormat, part: Int = 1, steps: [ReplayStep] = []) {
        self.id = id
        self.file = file
        self.line = line
        self.format = format
        self.part = part
        self.steps = steps
    }

    /// The bot's handoffs, in order.
    public var handoffs: [ReplayHandoff] { handoffs(against: false) }

    /// The handoffs of the bot, or of the other bot with `against: true`.
    public func handoffs(against: Bool) -> [ReplayHandoff] {
        var out: [ReplayHandoff] = []
        for (i, s) in steps.enumerated() {
            if let o = against ? s.against : s.bot, let h = o.handoff {
                out.append(ReplayHandoff(step: i, customerMessage: o.customerMessage ?? 0, reason: h.reason, rule: h.rule))
            }
        }
        return out
    }

    /// Replies the bot would have sent.
    public var replies: Int { steps.reduce(0) { $0 + ($1.bot?.replies.count ?? 0) } }
    /// Messages of the conversation from customers.
    public var customerMessages: Int { steps.reduce(0) { $0 + ($1.message.from == .customer ? 1 : 0) } }
    /// Places where the bot would have spoken although a human agent had already written.
    public var spokeOverHuman: Int { steps.reduce(0) { $0 + ($1.spokeOverHuman ? 1 : 0) } }
    /// Messages on which the two bots differ (`--against`).
    public var differences: Int { steps.reduce(0) { $0 + ($1.differs ? 1 : 0) } }
    /// The step at which an agent took the conversation over, if one did.
    public var takeover: Int? { steps.firstIndex { $0.bot?.tookOver == true } }
}
