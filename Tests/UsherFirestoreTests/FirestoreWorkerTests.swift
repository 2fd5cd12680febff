import Foundation
import Testing
import UsherEngine
import UsherFirestoreTestServer
import UsherRules
import UsherRuntime
import UsherStore
import UsherTestSupport
@testable import UsherFirestore

let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The seed's app, as its `ChatViewModel` writes to Firestore: the conversation document, then
/// each customer message with `addDocument` (an id of Firestore's choosing). Written over REST
/// straight into the documents — not through Usher's `append`.
struct SeedApp {
    let rest: FirestoreREST
    let userID: String

    func open(at time: Date) async throws {
        try await rest.commit([.create(rest.name("conversations/\(userID)"), [
            "userId": .string(userID), "isAssignedToAgent": .bool(false), "messageCount": .integer(0),
            "createdAt": .timestamp(FirestoreTime.format(time)),
        ])])
    }

    @discardableResult
    func send(_ senderType: String, _ content: String, at time: Date) async throws -> String {
        let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(20)
        try await rest.commit([.create(rest.name("conversations/\(userID)/messages/\(id)"), [
            "senderType": .string(senderType), "content": .string(content), "timestamp": .timestamp(FirestoreTime.format(time)),
        ])])
        return String(id)
    }

    /// The messages as the app's listener shows them: ordered by `timestamp`.
    func messages() async throws -> [(senderType: String, content: String)] {
        var q = FirestoreQuery(parent: "conversations/\(userID)", collection: "messages")
        q.orderBy = ["timestamp", "__name__"]
        return try await rest.runQuery(q).map { ($0.fields["senderType"]?.string ?? "", $0.fields["content"]?.string ?? "") }
    }

    func conversation() async throws -> [String: FirestoreValue] {
        try await rest.batchGet([rest.name("conversations/\(userID)")])[0]?.fields ?? [:]
    }
}

func runWorker(_ stores: [FirestoreStore], bot: BotRuntime, _ body: () async throws -> Void) async throws {
    var options = Worker.Options()
    options.idleWait = .milliseconds(50)
    let workers = stores.enumerated().map { i, store in
        Worker(store: store, bots: [bot], workerID: "w\(i)", options: options, log: Logger(minimum: .error))
    }
    let tasks = workers.map { w in Task { try await w.run() } }
    try await body()
    for w in workers { w.requestStop() }
    for t in tasks { try await t.value }
}

let seedNotice = "Thanks for your question! We're connecting you to a support agent now."
let seedReplies = ["Hi there! How can we assist you today?", "Thanks for reaching out—we're here to help.",
                   "One moment while we review your request..."]

@Suite("Firestore store: the worker on the seed's documents (emulator)", .serialized)
struct FirestoreWorkerTests {
    /// The seed's conversation, written as the app writes it: three replies, the notice,
    /// `isAssignedToAgent` true, `messageCount` 4 — then silence once an agent has written.
    @Test func theSeedsConversation() async throws {
        let store = try await openStore()
        let app = SeedApp(rest: store.rest, userID: "pooja-uid")
        let bot = try BotRuntime(path: repoRoot.appendingPathComponent("bots/support").path)
        // As the app writes them: each message stamped with the phone's clock when sent, the
        // next one sent once the answer to the last one is shown.
        try await app.open(at: Date())
        try await runWorker([store], bot: bot) {
            for (i, text) in ["hello", "are you there", "???", "still nothing"].enumerated() {
                try await app.send("customer", text, at: Date())
                try await eventually("the answer to message \(i + 1)") { try await app.messages().count == 2 * (i + 1) }
            }
            let shown = try await app.messages()
            #expect(shown.map(\.senderType) == ["customer", "system", "customer", "system", "customer", "system", "customer", "system"],
                    "\(shown)")
            #expect(shown.filter { $0.senderType == "system" }.map(\.content) == seedReplies + [seedNotice])
            let conversation = try await app.conversation()
            #expect(conversation["isAssignedToAgent"] == .bool(true))
            #expect(conversation["messageCount"]?.integer == 4)
            #expect(conversation["userId"] == .string("pooja-uid"), "the app's own fields are left as they were")

            // An agent answers; then the customer writes again: the bot stays silent.
            try await app.send("agent", "Hi, I'm Li. How can I help?", at: Date())
            let last = try await app.send("customer", "my parcel is late", at: Date().addingTimeInterval(0.001))
            try await eventually("the last message done") {
                let state = try await store.rest.batchGet([store.rest.name(store.statePath("support", "pooja-uid"))])[0]
                return DoneMarks(state).contains(last)
            }
            let after = try await app.messages()
            #expect(after.count == shown.count + 2, "nothing after the agent's message: \(after.suffix(3))")
            #expect(try await app.conversation()["messageCount"]?.integer == 5)
            #expect(try await store.state(bot: "support", conversation: "pooja-uid")?.owner == .agent)
        }
        try await store.close()
    }

    /// A phone that was offline writes a message two minutes old, behind the position: the
    /// look-back sweep finds and answers it, once.
    @Test func aLateMessageIsAnswered() async throws {
        var options = FirestoreStore.Options()
        options.sweepInterval = .milliseconds(500)
        let store = try await openStore(options: options)
        let bot = try BotRuntime(path: try temporaryBot(TestBot.oneReply).path)
        let now = Date()
        try await runWorker([store], bot: bot) {
            let first = SeedApp(rest: store.rest, userID: "on-time")
            try await first.send("customer", "hello", at: now)
            try await eventually("the on-time message answered") { try await first.messages().count == 2 }
            try await eventually("the position past it") { try await store.position(bot: bot.id) != .start }
            let late = SeedApp(rest: store.rest, userID: "offline")
            try await late.send("customer", "sent from the tunnel", at: now.addingTimeInterval(-120))
            try await eventually("the late message answered") { try await late.messages().count == 2 }
            try await Task.sleep(for: .seconds(1.5))   // a few more sweeps: still one reply
            #expect(try await late.messages().count == 2)
            #expect(try await first.messages().count == 2)
        }
        try await store.close()
    }

    /// Two workers on the same project, conversations flowing in: every conversation gets its
    /// three replies and one notice, none twice.
    @Test func twoWorkersDoNotDoubleReply() async throws {
        let project = try await FirestoreEmulator.ready().project()
        let a = try await openStore(project), b = try await openStore(project)
        let bot = try BotRuntime(path: try temporaryBot(TestBot.rules).path)
        let conversations = 12
        try await runWorker([a, b], bot: bot) {
            let t0 = Date()
            for k in 0..<4 {
                for c in 0..<conversations {
                    try await SeedApp(rest: a.rest, userID: "c\(c)").send("customer", "message \(k)", at: t0.addingTimeInterval(Double(k)))
                }
            }
            for c in 0..<conversations {
                let app = SeedApp(rest: a.rest, userID: "c\(c)")
                try await eventually("c\(c) handed off") { try await app.messages().count == 8 }
            }
            try await Task.sleep(for: .seconds(1))
            for c in 0..<conversations {
                let app = SeedApp(rest: a.rest, userID: "c\(c)")
                let said = try await app.messages().filter { $0.senderType == "system" }.map(\.content)
                #expect(said.count == 4 && Array(said.prefix(3)) == ["one", "two", "three"], "c\(c): \(said)")
                #expect(try await app.conversation()["messageCount"]?.integer == 4, "c\(c)")
            }
        }
        try await a.close()
        try await b.close()
    }
}
