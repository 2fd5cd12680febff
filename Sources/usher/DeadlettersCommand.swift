import Foundation
import UsherSQLite
import UsherStore
import UsherWebhook
import UsherYAML

/// `usher deadletters`: the calls of the webhook and Chatwoot stores given up on — listed, and
/// sent again.
enum DeadlettersCommand: Command {
    static let name = "deadletters"
    static let summary = "list the webhook or Chatwoot calls given up on, and send them again"
    static let help = """
    Usage: usher deadletters --store webhook:CALLBACK_URL|chatwoot+http[s]://HOST[:PORT] [--state FILE]
                             [--resend ID|all] [--format text|json]

    The calls of the webhook or Chatwoot store that were not delivered: refused by the receiver
    (a 4xx other than 408 and 429), or still failing after --attempts tries (timeouts, no
    connection, 5xx). Oldest first, with the status and error of the last attempt.

    With --resend, sends them again now, to the store's URL as given here: the webhook's with
    their Idempotency-Key and a fresh signature (USHER_WEBHOOK_SECRET, unless --signatures off),
    Chatwoot's with the bot's token (CHATWOOT_API_TOKEN), each message only after Chatwoot's
    conversation shows it was not made already; those the receiver takes (2xx), or has, stop
    being dead letters, the others stay. A dead letter no longer holds up its conversation:
    sent again, it arrives after the calls that followed it.

    Options:
      --store URL       the store: webhook:CALLBACK_URL or chatwoot+http[s]://HOST[:PORT]
      --state FILE      its state file (default usher-state.db)
      --signatures off  webhook: send unsigned (when the receiver takes unsigned calls)
      --resend ID|all   send the dead letter ID (repeatable), or all of them, again
      --format FORMAT   text (default) or json
      -h, --help        show this help

    Exit status: 0 listed, or every call sent again was taken; 1 one was not, or the state
    file failed; 64 usage error.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: Stores.optionNames.union(["--store", "--resend", "--format"]), flags: [])
        guard a.positionals.isEmpty else { throw UsageError("takes no arguments") }
        let format = try a.choice("--format", ["text", "json"], default: "text")
        guard let url = a.value("--store"), [WebhookStore.adapter, ChatwootAgentBot.adapter].contains(where: { $0.opens(url) }) else {
            throw UsageError("give the webhook or Chatwoot store: --store webhook:CALLBACK_URL or chatwoot+http://HOST:PORT "
                             + "(and --state FILE unless usher-state.db)")
        }
        let resend = a.all("--resend")
        var chosen = Set<Int64>()
        for r in resend where r != "all" {
            guard let id = Int64(r) else { throw UsageError("--resend takes a dead letter's ID (a number) or all, got '\(r)'") }
            chosen.insert(id)
        }
        let ids = resend.isEmpty || resend.contains("all") ? nil : chosen
        guard let store = try Stores.open(url, a, mustExist: true) as? WebhookStore else {
            throw UsageError("\(StoreURL.redacted(url)) is not a webhook or Chatwoot store")
        }
        return blocking(closing: store) {
            var letters = try await store.deadLetters()
            if resend.isEmpty {
                print(letters, format: format)
                return .ok
            }
            if let ids {
                let missing = ids.subtracting(letters.map(\.id))
                if !missing.isEmpty {
                    Terminal.err("usher deadletters: no dead letter \(missing.sorted().map(String.init).joined(separator: ", ")); "
                                 + "usher deadletters lists them\n")
                    return .failure
                }
                letters = letters.filter { ids.contains($0.id) }
            }
            let results = try await store.resend(letters)
            if format == "json" {
                let rows: [[String: Any]] = results.map { ["id": $0.letter.id, "key": $0.letter.key, "delivered": $0.delivered, "detail": $0.detail] }
                let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                Terminal.out(String(decoding: data, as: UTF8.self) + "\n")
            } else {
                Terminal.table([["ID", "KEY", "RESULT"]]
                               + results.map { ["\($0.letter.id)", $0.letter.key, ($0.delivered ? "delivered " : "failed again: ") + $0.detail] })
                let delivered = results.filter(\.delivered).count
                Terminal.out("\(delivered) of \(results.count) delivered\(delivered < results.count ? "; the others stay dead letters" : "")\n")
            }
            return results.allSatisfy(\.delivered) ? .ok : .failure
        }
    }

    private static func print(_ letters: [DeadLetter], format: String) {
        if format == "json" {
            let f = ISO8601DateFormatter()
            let rows: [[String: Any]] = letters.map {
                ["id": $0.id, "key": $0.key, "conversation": $0.conversation, "attempts": $0.attempts,
                 "status": $0.status ?? NSNull(), "error": $0.error, "failed_at": f.string(from: $0.failedAt),
                 "created_at": f.string(from: $0.createdAt)]
            }
            let data = (try? JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
            Terminal.out(String(decoding: data, as: UTF8.self) + "\n")
            return
        }
        guard !letters.isEmpty else {
            Terminal.out("no dead letters: every call was delivered or is still being tried\n")
            return
        }
        let now = Date()
        var rows = [["ID", "FAILED", "CONVERSATION", "KEY", "ATTEMPTS", "STATUS", "ERROR"]]
        for l in letters {
            let error = l.error.count > 60 ? String(l.error.prefix(59)) + "…" : l.error
            rows.append(["\(l.id)", DurationText.format(max(0, now.timeIntervalSince(l.failedAt))) + " ago", l.conversation, l.key,
                         "\(l.attempts)", l.status.map(String.init) ?? "-", error])
        }
        Terminal.table(rows)
        Terminal.out("\(letters.count) dead letter\(letters.count == 1 ? "" : "s"); usher deadletters --resend ID|all sends them again\n")
    }
}
