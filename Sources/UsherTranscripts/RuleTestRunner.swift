public import UsherEngine
public import UsherRules
import UsherText
import Foundation

/// Runs rule tests: each test plays its conversation through `Engine.decide` (with a trace),
/// from a fresh conversation, on a virtual clock, and checks every customer step's `expect`.
///
/// The clock starts at the test's `start`; every message happens at the clock's time and moves
/// it on by one second, so consecutive messages are one second apart; `wait` moves it on by its
/// duration; `close` ends the session as a backend closing the conversation would.
public enum RuleTestRunner {
    /// The sender id of the customer's messages (`customer_name:` sets their sender name).
    public static let customerID = "customer"
    /// The sender id of `agent:` messages.
    public static let agentID = "agent"
    /// The sender name of `agent:` messages.
    public static let agentName = "Agent"

    /// Traced, on a clock that never moves: the decision's time budget (`limits.decision_budget`)
    /// never runs out, so a test's verdict never depends on how busy the machine is. The
    /// regexes' own limits still hold; the budget is the worker's guard, and `usher explain`
    /// and `usher replay` still show where it runs out.
    static let options = Engine.Options(trace: true, clock: .stopped)

    /// Runs the suite's tests whose name contains `filter` (case-insensitive; all when `nil`).
    public static func run(_ suite: RuleTestSuite, ruleSet: RuleSet, filter: String? = nil) -> [RuleTestResult] {
        suite.tests.filter { $0.matches(filter: filter) }.map { run($0, file: suite.path, ruleSet: ruleSet) }
    }

    /// Runs one test.
    public static func run(_ test: RuleTest, file: String, ruleSet: RuleSet) -> RuleTestResult {
        var state = ConversationState(conversationID: test.conversationID, channel: test.channel, locale: test.locale,
                                      customerName: test.customerName, customerID: customerID)
        state.tags = Array(Set(test.tags)).sorted()
        var now = test.start
        var messages = 0
        var failures: [RuleTestFailure] = []
        for (index, step) in test.steps.enumerated() {
            let role: SenderRole, text: String
            switch step.action {
            case let .wait(seconds):
                now = now.addingTimeInterval(seconds)
                continue
            case .close:
                state = Engine.closeSession(state)
                continue
            case let .customer(t): (role, text) = (.customer, t)
            case let .agent(t): (role, text) = (.agent, t)
            }
            messages += 1
            let message = Message(id: "m\(messages)", conversationID: test.conversationID, from: role,
                                  senderID: role == .agent ? agentID : customerID,
                                  senderName: role == .agent ? agentName : test.customerName, text: text, at: now)
            let decision = Engine.decide(ruleSet, state, message, now: now, options: options)
            if let expectation = step.expectation {
                let mismatches = check(expectation, decision)
                if !mismatches.isEmpty {
                    failures.append(RuleTestFailure(step: step, stepNumber: index + 1, mismatches: mismatches,
                                                    decision: decision, stateBefore: state, time: now))
                }
            }
            state = decision.state
            now = now.addingTimeInterval(1)
        }
        return RuleTestResult(test: test, file: file, failures: failures)
    }

    /// Every expectation key that `decision` does not meet.
    public static func check(_ e: RuleTestExpectation, _ decision: Decision) -> [RuleTestMismatch] {
        let replies = decision.replies
        let system = decision.effects.compactMap { if case let .system(t, _) = $0 { t } else { nil } }
        let notices = decision.effects.compactMap { if case let .notify(t, _, _, _) = $0 { t } else { nil } }
        let handoff = decision.handoff?.reason
        var out: [RuleTestMismatch] = []

        if e.silent, !replies.isEmpty || !system.isEmpty || handoff != nil {
            var did = replies.map { "reply \(RuleTestText.quote($0))" } + system.map { "system \(RuleTestText.quote($0))" }
            if let handoff { did.append("handoff \(handoff)") }
            out.append(.init(key: "silent", expected: "no reply, system notice or handoff", actual: did.joined(separator: ", ")))
        }
        if let rules = e.rules, rules != decision.firedRules {
            out.append(.init(key: "rule", expected: list(rules), actual: firedDescription(decision)))
        }
        // A safety limit that dropped the replies says so where the reply was expected.
        let dropped = decision.limit.map { " (\($0) dropped the repl\($0.rules.count == 1 ? "y" : "ies"))" } ?? ""
        if let m = mismatch("reply", e.replies, replies, none: "no reply" + dropped) { out.append(m) }
        if let expected = e.quickReplies, let m = mismatch(expected, decision.quickReplies.flatMap { $0 }) { out.append(m) }
        if let m = mismatch("system", e.system, system, none: "no system notice") { out.append(m) }
        if let h = e.handoff {
            let ok = switch h {
            case .handedOff: handoff != nil
            case .notHandedOff: handoff == nil
            case let .reason(r): handoff == r
            }
            if !ok {
                let expected = switch h {
                case .handedOff: "a handoff"
                case .notHandedOff: "no handoff"
                case let .reason(r): "handoff \(r)"
                }
                let cause = decision.limit.flatMap { $0.handedOff ? " (\($0))" : nil } ?? ""
                let actual = handoff.map { "handoff \($0)" + cause }
                out.append(.init(key: "handoff", expected: expected, actual: actual ?? "no handoff"))
            }
        }
        if let tags = e.tags, Set(tags) != Set(decision.state.tags) {
            out.append(.init(key: "tags", expected: tagList(Array(Set(tags)).sorted()), actual: tagList(decision.state.tags)))
        }
        if let m = mismatch("notify", e.notify, notices, none: "no notification") { out.append(m) }
        for (key, value) in e.metadata ?? [] {
            let actual = decision.state.metadata[key]
            if actual.map(value.matches) != true {
                out.append(.init(key: "metadata \(key)", expected: value.description,
                                 actual: actual.map(RuleTestText.quote) ?? "not set"))
            }
        }
        return out
    }

    private static func mismatch(_ key: String, _ expected: RuleTestTexts?, _ actual: [String], none: String) -> RuleTestMismatch? {
        let shown = actual.isEmpty ? none : actual.map(RuleTestText.quote).joined(separator: ", ")
        switch expected {
        case nil:
            return nil
        case let .contains(text):
            if actual.contains(where: text.matches) { return nil }
            return .init(key: key, expected: text.description, actual: shown)
        case let .exactly(texts):
            if texts.count == actual.count, zip(texts, actual).allSatisfy({ $0.matches($1) }) { return nil }
            let wanted = texts.isEmpty ? none : "exactly [" + texts.map(\.description).joined(separator: ", ") + "]"
            return .init(key: key, expected: wanted, actual: actual.isEmpty ? none : "[\(shown)]")
        }
    }

    private static func mismatch(_ expected: RuleTestQuickReplies, _ actual: [QuickReply]) -> RuleTestMismatch? {
        let none = "no quick replies"
        let shown = actual.isEmpty ? none : QuickReply.line(actual)
        switch expected {
        case let .contains(item):
            if actual.contains(where: item.matches) { return nil }
            return .init(key: "quick_replies", expected: item.description, actual: shown)
        case let .exactly(items):
            if items.count == actual.count, zip(items, actual).allSatisfy({ $0.matches($1) }) { return nil }
            let wanted = items.isEmpty ? none : "exactly [" + items.map(\.description).joined(separator: ", ") + "]"
            return .init(key: "quick_replies", expected: wanted, actual: shown)
        }
    }

    /// `opening`, `[order-number, opening]`, `no rule`.
    private static func list(_ ids: [String]) -> String {
        ids.isEmpty ? "no rule" : ids.count == 1 ? ids[0] : "[\(ids.joined(separator: ", "))]"
    }

    private static func tagList(_ tags: [String]) -> String {
        tags.isEmpty ? "no tags" : "[\(tags.joined(separator: ", "))]"
    }

    /// The rules that fired, or why none did.
    static func firedDescription(_ d: Decision) -> String {
        switch d.outcome {
        case let .fired(ids): list(ids)
        case .fallback: "fallback"
        case .noMatch: "no rule (nothing matched and the bot has no fallback)"
        case .silent(.agent): "no rule (an agent has taken over the conversation)"
        case .silent: "no rule (the conversation is waiting for an agent and no while_waiting rule fired)"
        case .takeover: "no rule (an agent's message)"
        case let .ignored(why): "no rule (ignored: \(why))"
        }
    }
}
