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
      --store URL          sqlite:PATH (default sqlite:usher.db) or postgres://USER@HOST/DB
      --mapping FILE       with postgres: the mapping file of a helpdesk's own tables
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

    Exit status: 0 written, 1 the store failed, 64 usage error.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: ["--store", "--mapping", "--conversation", "--from", "--name", "--sender-id", "--channel", "--locale", "--bot"],
                              flags: ["--close", "--wait"])
        guard let conversation = a.value("--conversation"), !conversation.isEmpty else { throw UsageError("--conversation is required") }
        let close = a.flag("--close")
        guard close ? a.positionals.isEmpty : a.positionals.count == 1 else {
            throw UsageError(close ? "--close takes no TEXT" : a.positionals.isEmpty ? "needs the message TEXT" : "too many arguments; quote the TEXT")
        }
        let from = try SenderRole(rawValue: a.choice("--from", ["customer", "agent"], default: "customer"))!
        let store = try StoreURL.open(a.value("--store") ?? StoreURL.default, mapping: a.value("--mapping"))
        let message = NewMessage(conversationID: conversation, kind: close ? .close : .message, from: close ? .system : from,
                                 senderID: a.value("--sender-id") ?? (a.value("--mapping") != nil ? nil
                                     : from == .agent ? "agent" : "customer-\(conversation)"),
                                 senderName: a.value("--name"), text: a.positionals.first ?? "",
                                 channel: a.value("--channel"), locale: a.value("--locale"))
        let wait = a.flag("--wait")
        let bot = a.value("--bot") ?? "support"
        return blocking(closing: store) {
            let stored = try await store.append(message)
            Terminal.out(close ? "closed \(conversation)\n" : "sent \(stored.id) to \(conversation) (seq \(stored.seq))\n")
            guard wait else { return .ok }
            let decided = try await waitUntilDecided(store, bot: bot, message: stored)
            let answers = try await waitForAnswers(store, conversation: conversation, after: stored.seq,
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
            let pending = try await store.pending(bot: bot, after: message.seq - 1, limit: 1)
            if pending.first?.id != message.id { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// Bot and system messages after `seq`, once they stop arriving for 300 ms (or after `timeout`).
    static func waitForAnswers(_ store: any ChatStore, conversation: String, after seq: Int64,
                               timeout: Duration = .seconds(5)) async throws -> [StoredMessage] {
        let deadline = ContinuousClock.now + timeout
        var answers: [StoredMessage] = []
        var quietSince = ContinuousClock.now
        while ContinuousClock.now < deadline {
            let now = try await store.transcript(conversation: conversation).filter { $0.seq > seq && ($0.from == .bot || $0.from == .system) }
            if now.count != answers.count { answers = now; quietSince = ContinuousClock.now }
            if ContinuousClock.now - quietSince > .milliseconds(300) && (!answers.isEmpty || timeout <= .milliseconds(300)) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return answers
    }
}

/// Runs async work from a synchronous command; store failures become exit status 1. `closing`:
/// a store closed once the work is done, failed or not, before the command returns — its
/// threads (PostgreSQL's LISTEN and reading threads, inside libpq and OpenSSL) must be gone
/// before the process exits, or `exit`'s clean-up of OpenSSL races them (a crash after the
/// work was done, and a non-zero status that would make a script send again).
func blocking(closing store: (any ChatStore)? = nil, _ body: @escaping @Sendable () async throws -> ExitCode) -> ExitCode {
    let done = DispatchSemaphore(value: 0)
    let result = ResultBox()
    Task.detached {
        do { result.code = try await body() } catch {
            Terminal.err("usher: \(error)\n")
            result.code = .failure
        }
        if let store { try? await store.close() }
        done.signal()
    }
    done.wait()
    return result.code
}

final class ResultBox: @unchecked Sendable {
    // @unchecked: written by one task before it signals the semaphore the reader waits on.
    var code: ExitCode = .failure
}
