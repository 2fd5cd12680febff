import Foundation
import Testing
import UsherChatwootStandIn
import UsherSQLite
import UsherStore
import UsherTestSupport
import UsherWebhook

/// `usher run --store chatwoot+http://…` as a real process, killed with SIGKILL at random points
/// while the stand-in for Chatwoot sends its customers' messages as webhooks and its API is down
/// for stretches. Counted afterwards at the stand-in: Chatwoot has no idempotency key, so every
/// message the bot made twice would be there twice.
@Suite("Chatwoot crash safety", .serialized)
struct ChatwootCrashTests {
    static let conversations = 200, perConversation = 10, posters = 8
    static let notice = "Thanks for your question! We're connecting you to a support agent now."

    @Test func killNineWhileWebhooksFlowAndChatwootIsDownForStretches() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let chatwoot = try ChatwootStandIn()
        defer { chatwoot.close() }
        let state = scratch.dir.appendingPathComponent("state.db").path
        let address = "127.0.0.1:\(try Loopback.freePort())"
        chatwoot.webhookURL = "http://\(address)/chatwoot/webhook"
        func start() throws -> WorkerProcess {
            try WorkerProcess(bot: scratch.bot, store: "chatwoot+\(chatwoot.baseURL)",
                              extra: ["--listen", address, "--state", state, "--attempts", "100000", "--max-backoff", "1s",
                                      "--teams", "general=5"],
                              environment: [ChatwootAgentBot.tokenVariable: chatwoot.token,
                                            ChatwootAgentBot.secretVariable: chatwoot.secret])
        }
        let displays = (0..<Self.conversations).map { chatwoot.startConversation(contact: "Customer \($0)") }

        let loop = try await KillLoop.run(start: start, setDown: chatwoot.setDown, refused: { chatwoot.refusedWhileDown }) {
            // Each conversation's messages in order, each once the bot took the one before.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for p in 0..<Self.posters {
                    group.addTask {
                        for k in 0..<Self.perConversation {
                            for c in stride(from: p, to: Self.conversations, by: Self.posters) {
                                try await chatwoot.customerWrites(displays[c], "message \(k)")
                            }
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let worker = loop.worker

        // Every conversation: three replies, the handoff's notice and its note.
        try await eventually("every conversation handed off", timeout: .seconds(180), detail: worker.log) {
            chatwoot.conversations.allSatisfy { c in c.handoffs == 1 && c.messages.filter { $0.sender == .bot }.count >= 5 }
        }
        let (status, _) = worker.terminate()
        #expect(status == 0, "SIGTERM: clean exit\n\(worker.log.suffix(2000))")
        #expect(loop.kills >= 30)
        #expect(loop.stretches > 0 && chatwoot.refusedWhileDown > 0, "Chatwoot's API was down for stretches")

        var problems: [String] = []
        var made = 0
        for c in chatwoot.conversations {
            let bot = c.messages.filter { $0.sender == .bot }
            made += bot.count
            let keys = bot.compactMap(\.usherKey)
            if keys.count != bot.count || Set(keys).count != keys.count {
                problems.append("\(c.displayID): \(bot.count) messages, keys \(keys)")
            } else if bot.map({ $0.content ?? "" }) != ["one", "two", "three", Self.notice, bot.last?.content ?? ""]
                        || bot.map(\.isPrivate) != [false, false, false, false, true] {
                problems.append("\(c.displayID): \(bot.map { $0.content ?? "" })")
            } else if c.handoffs != 1 || c.status != "open" || c.teamID != 5 {
                problems.append("\(c.displayID): \(c.handoffs) handoffs, \(c.status), team \(c.teamID.map(String.init) ?? "none")")
            }
        }
        #expect(problems.isEmpty, "\(problems.count) conversations wrong, first: \(problems.prefix(5))")
        #expect(made == Self.conversations * 5, "0 duplicated, 0 lost")
        let checks = chatwoot.calls.filter { $0.method == "GET" && !$0.path.hasSuffix("/labels") }.count
        print("chatwoot crash test: \(loop.kills) kills, \(loop.stretches) stretches down, \(chatwoot.calls.count) API calls "
              + "(\(checks) checks before a repeat), \(made) messages made, \(chatwoot.webhooksTaken) webhooks taken")

        // Nothing lost at the intake, nothing left behind.
        let store = try await SQLiteStore(path: state)
        for c in displays {
            let t = try await store.transcript(conversation: ChatwootStandIn.usherID(c))
            #expect(t.filter { $0.from == .customer }.map(\.text) == (0..<Self.perConversation).map { "message \($0)" })
        }
        #expect(try await store.deadLetters(channel: "chatwoot").isEmpty)
        #expect(try await store.outboxCount(channel: "chatwoot") == 0)
        try await store.close()
    }
}
