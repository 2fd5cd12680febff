import Foundation
import Testing
@testable import UsherFirestore
import UsherFirestoreTestServer
import UsherStore
import UsherTestSupport

/// The worker as a real process on the Firestore emulator, killed with SIGKILL at random points
/// while 30 conversations × 5 messages flow in: nothing lost, nothing done twice, order kept.
@Suite("Worker crash safety (Firestore emulator)", .serialized)
struct FirestoreCrashTests {
    @Test func killNineWhileMessagesFlow() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let emulator = try await FirestoreEmulator.ready()
        let url = "firestore://" + emulator.project("crash")
        let environment = ["FIRESTORE_EMULATOR_HOST": emulator.host]
        let store = try await FirestoreStore.open(StoreRequest(url: url), environment: environment)
        let conversations = 30, perConversation = 5

        let fed = Flag()
        let feeder = Task {
            defer { fed.set() }
            for k in 0..<perConversation {
                for c in (0..<conversations).shuffled() {
                    try await Feed.appendRetrying(store, NewMessage(id: "c\(c)-m\(k)", conversationID: "c\(c)", from: .customer,
                                                                  senderID: "u\(c)", text: "message \(k)"))
                }
                try await Task.sleep(for: .milliseconds(300))
            }
        }
        var kills = 0
        var worker = try WorkerProcess(bot: scratch.bot, store: url, extra: ["--from", "beginning"], environment: environment)
        while kills < 20 || !fed.isSet {
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...400)))
            worker.kill9()
            kills += 1
            worker = try WorkerProcess(bot: scratch.bot, store: url, extra: ["--from", "beginning"], environment: environment)
            if kills > 200 { break }
        }
        try await feeder.value

        // Every conversation answered as the bot says, each answer once and in order.
        func problems() async throws -> [String] {
            var problems: [String] = []
            for c in 0..<conversations {
                let t = try await store.transcript(conversation: "c\(c)")
                let customer = t.filter { $0.from == .customer }.map(\.id)
                if customer != (0..<perConversation).map({ "c\(c)-m\($0)" }) { problems.append("c\(c): customer messages \(customer)") }
                let replies = t.filter { $0.from == .bot }.map(\.text)
                if replies != ["one", "two", "three"] { problems.append("c\(c): replies \(replies)") }
                if t.filter({ $0.from == .system }).count != 1 { problems.append("c\(c): \(t.filter { $0.from == .system }.count) notices") }
                let count = try await store.rest.batchGet([store.rest.name("conversations/c\(c)")])[0]?.fields["messageCount"]?.integer
                if count != Int64(perConversation) { problems.append("c\(c): messageCount \(String(describing: count))") }
                let state = try await store.state(bot: "crash", conversation: "c\(c)")
                if state?.customerMessages != perConversation { problems.append("c\(c): state counted \(String(describing: state?.customerMessages))") }
            }
            return problems
        }
        var last: [String] = []
        try await eventually("every message answered once", timeout: .seconds(120), detail: "\(last.prefix(10))\n\(worker.log)") {
            last = try await problems()
            return last.isEmpty
        }
        let (status, _) = worker.terminate()
        #expect(status == 0, "SIGTERM: clean exit\n\(worker.log)")
        #expect(kills >= 20)
        try await store.close()
    }
}

/// The CLI on Firestore, as the README shows it: a worker process, `usher send --wait`,
/// `usher inbox`, with the emulator named by FIRESTORE_EMULATOR_HOST.
@Suite("usher send and inbox on Firestore (emulator)", .serialized)
struct FirestoreCLITests {
    @Test func sendWaitsForTheAnswerAndInboxListsTheHandoff() async throws {
        let emulator = try await FirestoreEmulator.ready()
        let url = "firestore://" + emulator.project("cli")
        setenv("FIRESTORE_EMULATOR_HOST", emulator.host, 1)
        defer { unsetenv("FIRESTORE_EMULATOR_HOST") }
        // The first send may come before the worker has read where it starts: from the beginning.
        let worker = try WorkerProcess(bot: repoRoot.appendingPathComponent("bots/support").path, store: url, extra: ["--from", "beginning"])
        defer { _ = worker.terminate() }
        let first = try runUsher(["send", "--store", url, "--conversation", "pooja", "--wait", "hello"], stdout: true)
        #expect(first.status == 0 && first.output.contains("Support: Hi there! How can we assist you today?  [opening]"), "\(first.output)")
        #expect(!first.output.contains("(seq"), "Firestore messages have no sequence number to print: \(first.output)")
        for text in ["are you there", "???"] { _ = try runUsher(["send", "--store", url, "--conversation", "pooja", "--wait", text], stdout: true) }
        let fourth = try runUsher(["send", "--store", url, "--conversation", "pooja", "--wait", "still nothing"], stdout: true)
        #expect(fourth.output.contains("Thanks for your question! We're connecting you to a support agent now."), "\(fourth.output)")
        let inbox = try runUsher(["inbox", "--store", url], stdout: true)
        #expect(inbox.status == 0 && inbox.output.contains("pooja") && inbox.output.contains("threshold") && inbox.output.contains("1 waiting"),
                "\(inbox.output)")
        _ = try runUsher(["send", "--store", url, "--conversation", "pooja", "--from", "agent", "Hi, Li here"], stdout: true)
        let after = try runUsher(["send", "--store", url, "--conversation", "pooja", "--wait", "thanks"], stdout: true)
        #expect(after.output.contains("(the bot stays silent: an agent owns the conversation)"), "\(after.output)")
        #expect(try runUsher(["inbox", "--store", url], stdout: true).output.contains("no conversation is waiting"))
    }

    /// Neither the emulator nor credentials: a clear message, before anything is tried.
    @Test func withoutEmulatorOrCredentialsItSaysWhatToSet() throws {
        unsetenv("FIRESTORE_EMULATOR_HOST")
        let r = try runUsher(["inbox", "--store", "firestore://demo"])
        #expect(r.status == 1 && r.output.contains("FIRESTORE_EMULATOR_HOST") && r.output.contains("GOOGLE_APPLICATION_CREDENTIALS"), "\(r.output)")
        setenv("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/key.json", 1)
        defer { unsetenv("GOOGLE_APPLICATION_CREDENTIALS") }
        let missing = try runUsher(["inbox", "--store", "firestore://demo"])
        #expect(missing.status == 1 && missing.output.contains("/nonexistent/key.json"), "\(missing.output)")
    }
}
