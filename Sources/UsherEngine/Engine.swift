public import Foundation
public import UsherRules
public import UsherText

/// The pure decision function: `(rule set, conversation state, message, now) → decision`.
/// No I/O, no globals, and no clock of its own — `now` is passed in, and the monotonic clock
/// that bounds a decision's time (`limits.decision_budget`) is injected (`Options.clock`)
/// (DESIGN.md §3, "Evaluation order").
public enum Engine {
    /// Knobs that do not change what a rule means.
    public struct Options: Sendable {
        /// Record a verdict for every rule (explain, tests, replay). Off on the worker's hot path.
        public var trace: Bool
        /// Longer messages are truncated for matching, and the truncation is reported.
        public var maxMessageBytes: Int
        /// The clock the decision's time budget (`limits.decision_budget`) is measured on: the
        /// machine's, or a test's manual one.
        public var clock: MonotonicClock
        public init(trace: Bool = false, maxMessageBytes: Int = 16_384, clock: MonotonicClock = .system) {
            self.trace = trace
            self.maxMessageBytes = maxMessageBytes
            self.clock = clock
        }
    }

    /// Decides what to do with one message.
    public static func decide(_ ruleSet: RuleSet, _ state: consuming ConversationState, _ message: Message,
                              now: Date, options: Options = .init()) -> Decision {
        var state = state
        func unchanged(_ outcome: Decision.Outcome) -> Decision {
            Decision(outcome: outcome, effects: [], state: state, ruleSetVersion: ruleSet.version,
                     trace: options.trace ? [] : nil, events: [])
        }
        // 1. The bot itself, system notices and other bots: no rule is evaluated.
        if message.senderID == ruleSet.bot.senderId { return unchanged(.ignored("the bot's own message")) }
        switch message.from {
        case .bot: return unchanged(.ignored("a message from another bot"))
        case .system: return unchanged(.ignored("a system notice"))
        case .agent, .customer: break
        }

        // 4. Sessions: a first message, or a message after `idle_reset` of silence, starts one.
        let idle = state.lastActivityAt.map { now.timeIntervalSince($0) } ?? 0
        if state.sessionStartedAt == nil || ruleSet.bot.idleReset.map({ idle >= $0 }) == true {
            state.startSession(at: now)
        }
        state.lastActivityAt = now
        state.version += 1

        // 2. A human agent: takeover, detected from the agent's message alone.
        if message.from == .agent {
            state.owner = .agent
            return unchanged(.takeover)
        }

        // 3. A customer message: counters first (the message counts itself).
        state.customerMessages += 1
        if state.customerName == nil { state.customerName = message.senderName }
        if state.customerID == nil { state.customerID = message.senderID }
        if state.owner == .agent { return unchanged(.silent(.agent)) }

        let run = Evaluation(ruleSet: ruleSet, state: state, message: message, now: now, idle: idle, options: options)
        return run.decide()
    }

    /// The backend closed or resolved the conversation: the next customer message starts a new
    /// session with the bot in charge.
    public static func closeSession(_ state: ConversationState) -> ConversationState {
        var s = state
        s.owner = .bot
        s.sessionStartedAt = nil
        s.version += 1
        return s
    }
}
