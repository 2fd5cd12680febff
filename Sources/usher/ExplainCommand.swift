import Foundation
import UsherDiagnostics
import UsherEngine
import UsherRules
import UsherYAML

/// `usher explain BOT TEXT`: every rule's verdict for one customer message.
enum ExplainCommand: Command {
    static let name = "explain"
    static let summary = "show, for one message, every rule and why it did or did not fire"
    static let help = """
    Usage: usher explain BOT TEXT [options]

    Decides one customer message TEXT with the bot's rules (BOT is a folder with bot.yaml) and
    prints every rule in evaluation order with its verdict, then the effects the bot would write.
    Nothing is written anywhere.

    The conversation is described with options (defaults: a fresh conversation, owner bot):
      --customer-messages N   this message is the Nth customer message of the session (default 1)
      --bot-replies N         replies the bot already sent in this session (default 0)
      --fallbacks N           messages that fell through to the fallback in a row (default 0)
      --idle DURATION         silence before this message, like 10m or 2h (default 0s)
      --at TIME               when the message arrives, ISO 8601 (2026-11-30T10:00:00+08:00);
                              default: now
      --owner OWNER           bot (default), waiting or agent
      --tags A,B              the conversation's tags
      --channel NAME          the conversation's channel
      --locale TAG            the conversation's locale (zh-CN, en, …)
      --language CODE         the language an earlier message of the conversation was in (es):
                              texts per language use it when this message does not tell
      --name NAME             the customer's name
      --fired RULE[,RULE]     rules that already fired in this session (for once and sequences)
      --format FORMAT         text (default) or json
      -h, --help              show this help

    Exit status: 0 explained, 1 the bot has errors (they are printed), 64 usage error.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: ["--customer-messages", "--bot-replies", "--fallbacks", "--idle", "--at",
                                              "--owner", "--tags", "--channel", "--locale", "--language", "--name", "--fired",
                                              "--format"],
                              flags: [])
        guard a.positionals.count == 2 else {
            throw UsageError(a.positionals.count < 2 ? "needs a BOT and a TEXT" : "too many arguments; quote the TEXT")
        }
        let format = try a.choice("--format", ["text", "json"], default: "text")
        let botPath = a.positionals[0]
        let text = a.positionals[1]

        let result = RuleSetLoader.loadBot(at: botPath)
        guard let ruleSet = result.ruleSet else {
            var printer = DiagnosticPrinter(colour: Terminal.colour(stdout: false))
            printer.add(result.sources)
            Terminal.err(printer.render(all: result.diagnostics.filter { $0.severity == .error }))
            Terminal.err("usher explain: \(botPath) has errors; run 'usher check \(botPath)'\n")
            return .failure
        }

        let now: Date
        if let at = a.value("--at") {
            guard let d = parseTime(at) else { throw UsageError("--at needs an ISO 8601 time like 2026-11-30T10:00:00+08:00, got '\(at)'") }
            now = d
        } else {
            now = Date()
        }
        let n = try a.int("--customer-messages") ?? 1
        guard n >= 1 else { throw UsageError("--customer-messages must be at least 1") }
        let owner = try Owner(rawValue: a.choice("--owner", Owner.allCases.map(\.rawValue), default: "bot"))!
        var idle: TimeInterval = 0
        if let v = a.value("--idle") {
            guard let d = DurationText.parse(v) else { throw UsageError("--idle needs a duration like 30s, 10m, 2h, got '\(v)'") }
            idle = d
        }

        var state = ConversationState(conversationID: "explain", channel: a.value("--channel"),
                                      locale: a.value("--locale"), customerName: a.value("--name"))
        state.session = 1
        state.sessionStartedAt = n > 1 || idle > 0 ? now.addingTimeInterval(-max(idle, 60)) : now
        state.lastActivityAt = n > 1 || idle > 0 ? now.addingTimeInterval(-idle) : nil
        if state.lastActivityAt == nil { state.sessionStartedAt = nil }
        state.customerMessages = n - 1
        state.botReplies = try a.int("--bot-replies") ?? 0
        state.fallbacksInARow = try a.int("--fallbacks") ?? 0
        state.owner = owner
        if let code = a.value("--language") {
            guard ruleSet.bot.languages.contains(code) else {
                throw UsageError("--language needs one of the bot's languages (\(ruleSet.bot.languages.isEmpty ? "bot.yaml declares none" : ruleSet.bot.languages.joined(separator: ", "))), got '\(code)'")
            }
            state.language = code
        }
        state.tags = (a.value("--tags") ?? "").split(separator: ",").map { String($0).trimmed }.filter { !$0.isEmpty }.sorted()
        for r in (a.value("--fired") ?? "").split(separator: ",").map({ String($0).trimmed }) where !r.isEmpty {
            guard ruleSet.rule(id: r) != nil else {
                throw UsageError("--fired names rule '\(r)', which \(botPath) does not have\(Suggestion.hint(for: r, in: ruleSet.rules.map(\.id)))")
            }
            state.recordFire(of: r, at: now.addingTimeInterval(-86_400 * 365))
        }

        let message = Message(id: "explain-1", conversationID: "explain", from: .customer,
                              senderName: a.value("--name"), text: text, at: now)
        let decision = Engine.decide(ruleSet, state, message, now: now, options: .init(trace: true))
        if format == "json" {
            Terminal.out(DecisionJSON.render(decision, ruleSet: ruleSet, text: text) + "\n")
        } else {
            Terminal.out(ExplainReport(ruleSet: ruleSet, decision: decision, text: text, now: now,
                                       colour: Terminal.colour()).render())
        }
        return .ok
    }

    static func parseTime(_ s: String) -> Date? {
        let f = ISO8601DateFormatter()
        if let d = f.date(from: s) { return d }
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: s)
    }

}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespaces) }
}
