import Foundation
import UsherEngine
import UsherStore

/// `usher send`: write a message into a store, as a backend would.
enum SendCommand: Command {
    static let name = "send"
    static let summary = "write a customer or agent message (or a close) into a store"
    static let help = """
    Usage: usher send --conversation ID [--store URL] [--from customer|agent] [options] TEXT
           usher send --conversation ID --close [--store URL]

    Writes one message into the store the way a chat backend would. A running `usher run` picks
    it up; with --wait, this command waits for the bot's answer and prints it.

    Options:
    \(Stores.help(column: 23))
      --conversation ID    the conversation (created on its first message)
      --from ROLE          customer (default) or agent
      --name NAME          the sender's name
      --sender-id ID       the sender's id (default: customer-ID or agent; with --mapping,
                           none: a helpdesk's ids are its own, often numbers)
      --channel NAME       the conversation's channel, on its first message (bots are chosen by
                           it; not given, a mapped column's default applies)
      --locale TAG         the conversation's locale, on its first message
      --close              close the conversation instead: its next message starts a new session
      --wait               wait (up to 5 s) until the bot has decided the message, and print its
                           replies and notices, or why it stayed silent
      --bot ID             with --wait: the bot that answers (default support)
      -h, --help           show this help

    Exit status: 0 written, 1 the store failed, 64 usage error, 69 the store's server is not up.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: Stores.optionNames.union(["--store", "--conversation", "--from", "--name", "--sender-id",
                                                                        "--channel", "--locale", "--bot"]),
                              flags: ["--close", "--wait"])
        guard let conversation = a.value("--conversation"), !conversation.isEmpty else { throw UsageError("--conversation is required") }
        let close = a.flag("--close")
        guard close ? a.positionals.isEmpty : a.positionals.count == 1 else {
            throw UsageError(close ? "--close takes no TEXT" : a.positionals.isEmpty ? "needs the message TEXT" : "too many arguments; quote the TEXT")
        }
        let from = try SenderRole(rawValue: a.choice("--from", ["customer", "agent"], default: "customer"))!
        let url = a.value("--store") ?? Stores.default
        let store = try Stores.backend(try Stores.open(url, a), url: url, for: "send")
        let message = NewMessage(conversationID: conversation, kind: close ? .close : .message, from: close ? .system : from,
                                 senderID: a.value("--sender-id") ?? (a.value("--mapping") != nil ? nil
                                     : from == .agent ? "agent" : "customer-\(conversation)"),
                                 senderName: a.value("--name"), text: a.positionals.first ?? "",
                                 channel: a.value("--channel"), locale: a.value("--locale"))
        let wait = a.flag("--wait")
        let bot = a.value("--bot") ?? "support"
        return blocking(closing: store) {
            let stored = try await store.append(message)
            Terminal.out(close ? "closed \(conversation)\n"
                         : "sent \(stored.id) to \(conversation)" + (stored.seq > 0 ? " (seq \(stored.seq))\n" : "\n"))
            guard wait else { return .ok }
            let decided = try await waitUntilDecided(store, bot: bot, message: stored)
            let answers = try await waitForAnswers(store, conversation: conversation, after: stored.id,
                                                   timeout: decided ? .milliseconds(300) : .seconds(1))
            for m in answers { Terminal.out(ChatCommand.render(m, colour: false) + "\n") }
            if answers.isEmpty {
                if !decided {
                    Terminal.out("(not decided within 5 s: is `usher run` running on this store for bot '\(bot)'?)\n")
                } else if let owner = try await store.state(bot: bot, conversation: conversation)?.owner, owner != .bot {
                    Terminal.out(owner == .agent ? "(the bot stays silent: an agent owns the conversation)\n"
                                                 : "(the bot stays silent: the conversation waits for an agent)\n")
                } else {
                    Terminal.out("(no answer: no rule matched and the bot has no fallback)\n")
                }
            }
            return .ok
        }
    }

    /// Whether `bot` has decided `message` (it is no longer pending) within 5 s.
    static func waitUntilDecided(_ store: any ChatStore, bot: String, message: StoredMessage) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if try await !isPending(store, bot: bot, message: message) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Whether `message` is among `bot`'s pending messages, read from the bot's position on.
    static func isPending(_ store: any ChatStore, bot: String, message: StoredMessage) async throws -> Bool {
        var at = try await store.position(bot: bot)
        while true {
            let page = try await store.pending(bot: bot, after: at, limit: 1000)
            if page.messages.contains(where: { $0.id == message.id }) { return true }
            if page.messages.isEmpty || page.end == at { return false }
            at = page.end
        }
    }

    /// Bot and system messages after the message `id` in the transcript, once they stop
    /// arriving for 300 ms (or after `timeout`).
    static func waitForAnswers(_ store: any BackendStore, conversation: String, after id: String,
                               timeout: Duration = .seconds(5)) async throws -> [StoredMessage] {
        let deadline = ContinuousClock.now + timeout
        var answers: [StoredMessage] = []
        var quietSince = ContinuousClock.now
        while ContinuousClock.now < deadline {
            let now = try await store.transcript(conversation: conversation).drop { $0.id != id }.dropFirst()
                .filter { $0.from == .bot || $0.from == .system }
            if now.count != answers.count { answers = now; quietSince = ContinuousClock.now }
            if ContinuousClock.now - quietSince > .milliseconds(300) && (!answers.isEmpty || timeout <= .milliseconds(300)) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return answers
    }
}
