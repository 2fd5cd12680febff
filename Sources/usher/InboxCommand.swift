import Foundation
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
    with its queue, the reason of the handoff, the customer and their last message.

    Options:
    \(Stores.help(column: 18))
      --bot ID          the bot whose handoffs to list (default support)
      --format FORMAT   text (default) or json
      -h, --help        show this help

    Exit status: 0 ok, 1 the store failed, 64 usage error, 69 the store's server is not up.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: Stores.optionNames.union(["--store", "--bot", "--format"]), flags: [])
        guard a.positionals.isEmpty else { throw UsageError("takes no arguments") }
        let format = try a.choice("--format", ["text", "json"], default: "text")
        let url = a.value("--store") ?? Stores.default
        let store = try Stores.backend(try Stores.open(url, a, mustExist: true), url: url, for: "inbox")
        let bot = a.value("--bot") ?? "support"
        return blocking(closing: store) {
            let entries = try await store.inbox(bot: bot)
            let now = Date()
            if format == "json" {
                let f = ISO8601DateFormatter()
                let rows: [[String: Any]] = entries.map {
                    ["conversation": $0.conversationID, "customer": $0.customerName ?? NSNull(), "queue": $0.queue ?? NSNull(),
                     "reason": $0.reason ?? NSNull(), "waiting_since": f.string(from: $0.waitingSince),
                     "last_message": $0.lastMessage ?? NSNull()]
                }
                let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                Terminal.out(String(decoding: data, as: UTF8.self) + "\n")
                return .ok
            }
            guard !entries.isEmpty else {
                Terminal.out("no conversation is waiting for an agent\n")
                return .ok
            }
            var rows = [["WAITING", "CONVERSATION", "QUEUE", "REASON", "CUSTOMER", "LAST MESSAGE"]]
            for e in entries {
                let last = (e.lastMessage ?? "").replacingOccurrences(of: "\n", with: " ")
                rows.append([DurationText.format(max(0, now.timeIntervalSince(e.waitingSince))), e.conversationID, e.queue ?? "-",
                             e.reason ?? "-", e.customerName ?? "-", last.count > 50 ? String(last.prefix(49)) + "…" : last])
            }
            Terminal.table(rows)
            Terminal.out("\(entries.count) waiting\n")
            return .ok
        }
    }
}
