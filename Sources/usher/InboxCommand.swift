import Foundation
import UsherRules
import UsherStore
import UsherYAML

/// `usher inbox`: the conversations waiting for an agent, oldest first.
enum InboxCommand: Command {
    static let name = "inbox"
    static let summary = "list conversations waiting for an agent, oldest first"
    static let help = """
    Usage: usher inbox [--store URL] [--bot ID] [--format text|json]

    The agents' queue (the seed's dashboard query, isAssignedToAgent = true): every
    conversation a bot handed off that no agent has answered yet, the longest waiting first,
    with its bot, its queue, the reason of the handoff, the customer and their last message.

    The bots are those of the bots/ folder here (each bot.yaml's id), or the one --bot names;
    with no bots/ folder and no --bot, the seed's bot, support.

    Options:
    \(Stores.help(column: 18))
      --bot ID          list only this bot's handoffs
      --format FORMAT   text (default) or json
      -h, --help        show this help

    Exit status: 0 ok, 1 the store failed, 64 usage error, 69 the store's server is not up.

    """

    /// The folder whose bots are listed when --bot is not given.
    static let botsFolder = "bots"

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: Stores.optionNames.union(["--store", "--bot", "--format"]), flags: [])
        guard a.positionals.isEmpty else { throw UsageError("takes no arguments") }
        let format = try a.choice("--format", ["text", "json"], default: "text")
        let bots = a.value("--bot").map { [$0] } ?? botIDs(in: botsFolder) ?? ["support"]
        let url = a.value("--store") ?? Stores.default
        let store = try Stores.backend(try Stores.open(url, a, mustExist: true), url: url, for: "inbox")
        return blocking(closing: store) {
            var entries: [(bot: String, entry: InboxEntry)] = []
            for bot in bots { entries += try await store.inbox(bot: bot).map { (bot, $0) } }
            // Oldest first across bots; each bot's own order (the store's) among equal times.
            entries = entries.enumerated().sorted { ($0.element.entry.waitingSince, $0.offset) < ($1.element.entry.waitingSince, $1.offset) }
                .map(\.element)
            let now = Date()
            if format == "json" {
                let f = ISO8601DateFormatter()
                let rows: [[String: Any]] = entries.map { bot, e in
                    ["bot": bot, "conversation": e.conversationID, "customer": e.customerName ?? NSNull(), "queue": e.queue ?? NSNull(),
                     "reason": e.reason ?? NSNull(), "waiting_since": f.string(from: e.waitingSince),
                     "last_message": e.lastMessage ?? NSNull()]
                }
                let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                Terminal.out(String(decoding: data, as: UTF8.self) + "\n")
                return .ok
            }
            guard !entries.isEmpty else {
                Terminal.out("no conversation is waiting for an agent\n")
                return .ok
            }
            var rows = [["WAITING", "BOT", "CONVERSATION", "QUEUE", "REASON", "CUSTOMER", "LAST MESSAGE"]]
            for (bot, e) in entries {
                let last = (e.lastMessage ?? "").replacingOccurrences(of: "\n", with: " ")
                rows.append([DurationText.format(max(0, now.timeIntervalSince(e.waitingSince))), bot, e.conversationID, e.queue ?? "-",
                             e.reason ?? "-", e.customerName ?? "-", last.count > 50 ? String(last.prefix(49)) + "…" : last])
            }
            Terminal.table(rows)
            Terminal.out("\(entries.count) waiting\n")
            return .ok
        }
    }

    /// The ids of the bots in `folder` (each sub-folder with a bot.yaml), sorted; `nil` when
    /// there is no such folder or no bot in it. A bot.yaml whose id cannot be read is named on
    /// standard error: its conversations cannot be listed.
    static func botIDs(in folder: String) -> [String]? {
        let fm = FileManager.default
        let dirs = ((try? fm.contentsOfDirectory(atPath: folder)) ?? []).sorted().map { folder + "/" + $0 }
            .filter { fm.fileExists(atPath: $0 + "/bot.yaml") }
        var ids: [String] = []
        for dir in dirs {
            if let id = RuleSetLoader.botID(at: dir) {
                if !ids.contains(id) { ids.append(id) }
            } else {
                Terminal.err("usher inbox: \(dir)/bot.yaml names no bot id that can be read; its handoffs are not listed (usher check \(dir) says why)\n")
            }
        }
        return ids.isEmpty ? nil : ids
    }
}
