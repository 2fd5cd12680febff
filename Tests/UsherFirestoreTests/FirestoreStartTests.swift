import Foundation
import Testing
import UsherFirestoreTestServer
import UsherRuntime
import UsherStore
import UsherStoreTestKit
import UsherTestSupport
@testable import UsherFirestore

/// Usher introduced to an app with history (`usher run --from`): a worker's bot with no
/// position starts after the newest message by default, so nothing old is answered — not by the
/// intake, not by the look-back sweep, and an old message never holds a new one back.
@Suite("Firestore store: where a new bot starts (emulator)", .serialized)
struct FirestoreStartTests {
    @Test("now (the default): the history is left alone, what comes after is answered")
    func nowLeavesTheHistory() async throws {
        let project = try await FirestoreEmulator.ready().project()
        let setup = try await openStore(project)
        let now = Date()
        // A conversation with an unanswered message a minute old (inside the look-back), and one
        // from yesterday.
        let waiting = SeedApp(rest: setup.rest, userID: "waiting")
        try await waiting.send("customer", "anyone?", at: now.addingTimeInterval(-60))
        let old = SeedApp(rest: setup.rest, userID: "old")
        try await old.send("customer", "hello from yesterday", at: now.addingTimeInterval(-86_400))

        var options = FirestoreStore.Options()
        options.sweepInterval = .milliseconds(200)
        let store = try await openStore(project, options: options, start: .now)
        let bot = try BotRuntime(path: try temporaryBot(TestBot.oneReply).path)
        try await runWorker([store], bot: bot) {
            // Once the worker has taken its start (the bot's document written).
            try await eventually("the bot started") {
                try await store.rest.batchGet([store.rest.name(store.botPath(bot.id))])[0]?.fields["since"] != nil
            }
            try await waiting.send("customer", "hello?", at: Date())
            try await eventually("the new message answered") { try await waiting.messages().count == 3 }
            try await Task.sleep(for: .seconds(1))   // sweeps of the look-back: the old ones stay unanswered
        }
        #expect(try await waiting.messages().map { $0.senderType } == ["customer", "customer", "system"],
                "only the message written after the start is answered, and the older one did not hold it back")
        #expect(try await old.messages().count == 1)
        // A later start with another --from: the bot's position stands.
        let again = try await openStore(project, start: .beginning)
        try await runWorker([again], bot: bot) {
            try await Task.sleep(for: .seconds(1))
        }
        #expect(try await old.messages().count == 1, "--from is for a bot's first start only")
        try await store.close(); try await again.close(); try await setup.close()
    }

    @Test("a time: messages from it on are answered, earlier ones are not")
    func fromATime() async throws {
        let project = try await FirestoreEmulator.ready().project()
        let setup = try await openStore(project)
        let t = Date().addingTimeInterval(-30)
        let before = SeedApp(rest: setup.rest, userID: "before"), at = SeedApp(rest: setup.rest, userID: "at")
        try await before.send("customer", "too early", at: t.addingTimeInterval(-1))
        try await at.send("customer", "just in time", at: t)
        let store = try await openStore(project, start: .time(t))
        let bot = try BotRuntime(path: try temporaryBot(TestBot.oneReply).path)
        try await runWorker([store], bot: bot) {
            try await eventually("the message at the time answered") { try await at.messages().count == 2 }
        }
        #expect(try await before.messages().count == 1)
        try await store.close(); try await setup.close()
    }

    @Test("the CLI's reads see a conversation's state as it is now, not as their last page found it")
    func readsAreFresh() async throws {
        let emulator = try await FirestoreEmulator.ready()
        let url = "firestore://" + emulator.project()
        let reader = try await FirestoreStore.open(StoreRequest(url: url), environment: ["FIRESTORE_EMULATOR_HOST": emulator.host])
        let worker = try await openStore(String(url.dropFirst("firestore://".count)))
        let m = try await reader.append(NewMessage(conversationID: "c", from: .customer, senderID: "u", text: "hi"))
        // The reader's page reads the conversation's documents (no state yet) ...
        #expect(try await reader.pending(bot: ConformanceSuite.bot.id, after: .start, limit: 10).messages.map(\.id) == [m.id])
        // ... then the worker answers it.
        #expect(try await worker.commit(batch: [ConformanceSuite.sampleCommit(m, after: nil, reply: "hello")]) == [.committed])
        #expect(try await reader.state(bot: ConformanceSuite.bot.id, conversation: "c")?.version == 1)
        try await reader.close(); try await worker.close()
    }

    @Test("the CLI's reads (not a worker) write no start")
    func readsWriteNoStart() async throws {
        let emulator = try await FirestoreEmulator.ready()
        let url = "firestore://" + emulator.project()
        let reader = try await FirestoreStore.open(StoreRequest(url: url), environment: ["FIRESTORE_EMULATOR_HOST": emulator.host])
        _ = try await reader.append(NewMessage(conversationID: "c", from: .customer, senderID: "u", text: "hi"))
        #expect(try await reader.position(bot: "support") == .start)
        #expect(try await reader.rest.batchGet([reader.rest.name(reader.botPath("support"))])[0] == nil)
        try await reader.close()
    }
}
