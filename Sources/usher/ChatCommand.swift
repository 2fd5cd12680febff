import Foundation
import UsherEngine
import UsherRules
import UsherRuntime
import UsherStore

/// `usher chat BOT`: talk to a bot in the terminal as a customer, through a real store and worker.
enum ChatCommand: Command {
    static let name = "chat"
    static let summary = "chat with a bot in the terminal as the customer"
    static let help = """
    Usage: usher chat BOT [--store URL] [--conversation ID] [--name NAME] [options]

    An interactive chat as the customer: each line you type is written to the store as a
    customer message, and the bot's replies, system notices and handoffs are shown as they
    arrive. A worker for BOT runs inside this command (unless --no-worker, when a separate
    `usher run` answers), so this is exactly what a customer would see.

    Edit the rules while chatting: before each line is sent, changed files are reloaded as
    `usher run` reloads them (the whole bot validated aside; with errors, they are printed and
    the running rules stay). A handoff says why, naming the loop guard or max_bot_replies when
    one of them handed off.

    A reply's quick replies are shown under it: [Track my order] is a button (type its text to
    press it), [Returns → https://…] a link.

    While chatting:
      /agent TEXT   write TEXT as a human agent (the bot goes silent)
      /close        close the conversation (the next message starts a new session)
      /quit         leave (or Ctrl-D)

    Options:
    \(Stores.help(column: 23))
      --conversation ID    the conversation to use (default: a new one)
      --name NAME          your name as the customer (default: Customer)
      --channel NAME       the conversation's channel
      --locale TAG         the conversation's locale (zh-CN, es, …)
      --no-worker          do not start a worker; another `usher run` answers
      -h, --help           show this help

    Exit status: 0 when you leave, 1 the bot does not load or the store fails, 64 usage error,
    69 the store's server is not up.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: Stores.optionNames.union(["--store", "--conversation", "--name", "--channel", "--locale"]),
                              flags: ["--no-worker"])
        guard a.positionals.count == 1 else { throw UsageError("needs exactly one BOT, like bots/support") }
        let bot: BotRuntime
        do { bot = try BotRuntime(path: a.positionals[0]) } catch {
            Terminal.err("usher chat: \(error.message)")
            return .failure
        }
        let url = a.value("--store") ?? Stores.default
        let store = try Stores.backend(try Stores.open(url, a), url: url, for: "chat")
        let conversation = a.value("--conversation") ?? "chat-" + UUID().uuidString.prefix(8).lowercased()
        let name = a.value("--name") ?? "Customer"
        let channel = a.value("--channel"), locale = a.value("--locale")
        // A helpdesk's sender ids are its own (often numbers): none made up through a mapping.
        let mapped = a.value("--mapping") != nil
        let colour = Terminal.colour()
        var worker: Worker?
        // With --no-worker another process answers, and reloads its own rules.
        let ownWorker = !a.flag("--no-worker")
        if ownWorker {
            var options = Worker.Options()
            options.idleWait = .milliseconds(50)
            worker = Worker(store: store, bots: [bot], workerID: "chat-\(getpid())", options: options, log: Logger(minimum: .error))
        }
        let running = worker.map { w in Task.detached { try await w.run() } }
        let botName = bot.ruleSet.bot.name
        Terminal.out("Chatting with \(botName) in conversation \(conversation) as \(name). /agent TEXT writes as an agent, /close closes, /quit leaves.\n")
        let code = blocking {
            var owner: Owner = .bot
            while true {
                Terminal.out(colour ? "\u{1B}[1myou>\u{1B}[0m " : "you> ")
                guard let line = readLine() else { Terminal.out("\n"); break }
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.isEmpty { continue }
                if text == "/quit" || text == "/exit" { break }
                var message = NewMessage(conversationID: conversation, from: .customer, senderID: mapped ? nil : "customer-\(conversation)",
                                         senderName: name, text: text, channel: channel, locale: locale)
                if text == "/close" {
                    message = NewMessage(conversationID: conversation, kind: .close, from: .system, text: "")
                } else if text.hasPrefix("/agent ") {
                    message = NewMessage(conversationID: conversation, from: .agent, senderID: mapped ? nil : "agent", senderName: "Agent",
                                         text: String(text.dropFirst(7)))
                } else if text.hasPrefix("/") {
                    Terminal.out("unknown command \(text); use /agent TEXT, /close or /quit\n")
                    continue
                }
                if ownWorker { reloadIfChanged(bot, colour: colour) }
                let stored = try await store.append(message)
                let decided = try await SendCommand.waitUntilDecided(store, bot: bot.id, message: stored)
                let answers = try await SendCommand.waitForAnswers(store, conversation: conversation, after: stored.id,
                                                                   timeout: decided ? .milliseconds(300) : .seconds(1))
                for m in answers { Terminal.out(render(m, colour: colour, botName: botName) + "\n") }
                let state = try await store.state(bot: bot.id, conversation: conversation)
                let now = state?.owner ?? .bot
                if message.kind == .close {
                    Terminal.out(dim("(conversation closed: the next message starts a new session)", colour) + "\n")
                } else if now != owner {
                    switch now {
                    case .waiting:
                        let reason = try await store.inbox(bot: bot.id).first { $0.conversationID == conversation }?.reason
                        Terminal.out(dim("(\(handoffCause(reason, bot.ruleSet.bot)): the conversation waits for an agent; see `usher inbox`)", colour) + "\n")
                    case .agent: Terminal.out(dim("(an agent took over: the bot stays silent)", colour) + "\n")
                    case .bot: break
                    }
                } else if answers.isEmpty && message.from == .customer {
                    Terminal.out(dim(now == .bot ? "(no answer)" : "(the bot stays silent: \(now == .agent ? "an agent owns the conversation" : "waiting for an agent"))", colour) + "\n")
                }
                owner = message.kind == .close ? .bot : now
            }
            return .ok
        }
        worker?.requestStop()
        // The worker first, then the store: see `blocking(closing:)` for why it must be closed.
        _ = awaiting { _ = try? await running?.value; try? await store.close() }
        return code
    }

    /// `handed off by the loop guard: 3 replies within 1m`, `handed off (threshold)`: the
    /// limits name themselves, or the chat would seem to end for no reason.
    static func handoffCause(_ reason: String?, _ bot: BotConfig) -> String {
        switch reason {
        case "loop-guard"?: bot.loopGuard.map { "handed off by the \($0)" } ?? "handed off by the loop guard"
        case "max-bot-replies"?: "handed off: max_bot_replies" + (bot.maxBotReplies.map { " (\($0) replies a session)" } ?? "") + " reached"
        case let r?: "handed off (\(r))"
        case nil: "handed off"
        }
    }

    /// Reloads the bot's rules when a file changed since they were loaded, the way `usher run`
    /// does (`BotRuntime.reload`: the whole bot validated aside, a broken edit keeps the rules
    /// running), and says what happened.
    static func reloadIfChanged(_ bot: BotRuntime, colour: Bool) {
        guard bot.filesChanged() else { return }
        switch bot.reload() {
        case let .reloaded(version):
            Terminal.out(dim("(rules reloaded: \(CheckCommand.plural(bot.ruleSet.rules.count, "rule")), version \(version))", colour) + "\n")
        case .unchanged:
            break
        case let .rejected(errors):
            Terminal.out(errors + dim("(the edited rules have errors; still answering with version \(bot.ruleSet.version))", colour) + "\n")
        }
    }

    /// One bot message or system notice, as the chat shows it.
    static func render(_ m: StoredMessage, colour: Bool, botName: String? = nil) -> String {
        switch m.from {
        case .system:
            return colour ? "\u{1B}[33m── \(m.text) ──\u{1B}[0m" : "── \(m.text) ──"
        case .bot:
            let who = botName ?? m.senderName ?? "bot"
            let rule = m.ruleID.map { "  [\($0)]" } ?? ""
            let said = colour ? "\u{1B}[1;36m\(who):\u{1B}[0m \(m.text)\u{1B}[2m\(rule)\u{1B}[0m" : "\(who): \(m.text)\(rule)"
            guard !m.quickReplies.isEmpty else { return said }
            // Under the text, where a chat shows its buttons: a button is typed back as it is.
            let items = QuickReply.line(m.quickReplies)
            return said + "\n" + String(repeating: " ", count: who.count + 2) + (colour ? "\u{1B}[36m\(items)\u{1B}[0m" : items)
        case .agent, .customer:
            return "\(m.senderName ?? m.from.rawValue): \(m.text)"
        }
    }

    static func dim(_ s: String, _ colour: Bool) -> String { colour ? "\u{1B}[2m\(s)\u{1B}[0m" : s }
}

#if canImport(Glibc)
import Glibc
#endif
