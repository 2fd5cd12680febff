import Foundation
import Testing
import UsherEngine
import UsherRules
import UsherText

/// A conversation driven through the engine with a manual clock.
struct Driver {
    let ruleSet: RuleSet
    var state: ConversationState
    var now: Date
    /// The clock decisions' time budgets run on (the machine's unless a test sets a manual one).
    var clock: MonotonicClock = .system
    private var counter = 0

    /// Loads `rules` (a rule file) with `bot` (extra bot.yaml lines).
    init(_ rules: String, bot: String = "", conversation: String = "c-1",
         start: String = "2026-11-30T10:00:00+08:00", sourceLocation: SourceLocation = #_sourceLocation) throws {
        let botText = "bot: test\nname: Test\ntimezone: Asia/Shanghai\nrules: [rules.yaml]\n" + bot
        let result = RuleSetLoader.loadBot(botPath: "t/bot.yaml", files: ["t/bot.yaml": botText, "t/rules.yaml": rules])
        let errors = result.diagnostics.filter { $0.severity == .error }.map(\.headline)
        #expect(errors.isEmpty, "\(errors)", sourceLocation: sourceLocation)
        ruleSet = try #require(result.ruleSet, sourceLocation: sourceLocation)
        state = ConversationState(conversationID: conversation)
        now = ISO8601DateFormatter().date(from: start)!
    }

    @discardableResult
    mutating func send(_ from: SenderRole, _ text: String, senderID: String? = nil, name: String? = nil) -> Decision {
        counter += 1
        let m = Message(id: "m\(counter)", conversationID: state.conversationID, from: from, senderID: senderID,
                        senderName: name, text: text, at: now)
        let d = Engine.decide(ruleSet, state, m, now: now, options: .init(trace: true, clock: clock))
        state = d.state
        now = now.addingTimeInterval(1)
        return d
    }

    @discardableResult
    mutating func customer(_ text: String, name: String? = nil) -> Decision { send(.customer, text, name: name) }

    mutating func wait(_ seconds: TimeInterval) { now = now.addingTimeInterval(seconds) }
}

extension Decision {
    /// Replies, system notices and handoff reasons, compactly, for assertions.
    var summary: [String] {
        effects.compactMap {
            switch $0 {
            case let .reply(t, _, _): "reply: \(t)"
            case let .system(t, _): "system: \(t)"
            case let .handoff(r, _, _, _): "handoff: \(r)"
            default: nil
            }
        }
    }
}
