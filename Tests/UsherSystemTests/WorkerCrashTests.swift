import Foundation
import Testing
import UsherEngine
import UsherSQLite
import UsherStore

/// The worker as a real process on a real SQLite file, killed with SIGKILL at random points while
/// messages flow in. Everything is asserted by counting rows afterwards.
@Suite("Worker crash safety (SQLite)", .serialized)
struct WorkerCrashTests {
    /// 10,000 customer messages in 500 conversations; every 5th conversation also gets an agent
    /// message after its second customer message. ≥ 50 kill -9 at random moments.
    @Test func killNineWhileMessagesFlow() async throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let store = try await SQLiteStore(path: scratch.db)
        let conversations = 500, perConversation = 20
        var rng = SystemRandomNumberGenerator()

        let fed = Flag()
        let feeder = Task {
            defer { fed.set() }
            try await Feed.customers(store, conversations: conversations, perConversation: perConversation)
        }

        var kills = 0
        var worker = try WorkerProcess(scratch)
        while kills < 50 || !fed.isSet {
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...120, using: &rng)))
            worker.kill9()
            kills += 1
            worker = try WorkerProcess(scratch)
            if kills > 400 { break }
        }
        try await feeder.value
        try await drain(store, bot: "crash")
        let (status, seconds) = worker.terminate()
        #expect(status == 0, "SIGTERM: clean exit")
        #expect(seconds < 10)
        #expect(kills >= 50)

        try await Feed.verify(store, conversations: conversations, perConversation: perConversation)
        try await store.close()
    }
}

/// The crash tests' traffic and what must hold afterwards, for every store.
enum Feed {
    /// Writes in rounds: message k of every conversation, shuffled, then k+1; every 5th
    /// conversation also gets an agent message after its second customer message. Transient
    /// store errors (a database restarting) are retried, as a backend would.
    static func customers(_ store: any BackendStore, conversations: Int, perConversation: Int, pause: Duration = .milliseconds(40)) async throws {
        for k in 0..<perConversation {
            for c in (0..<conversations).shuffled() {
                try await appendRetrying(store, NewMessage(id: "c\(c)-m\(k)", conversationID: "c\(c)", from: .customer,
                                                           senderID: "u\(c)", text: "message \(k)"))
                if k == 1 && c % 5 == 0 {
                    try await appendRetrying(store, NewMessage(id: "c\(c)-agent", conversationID: "c\(c)", from: .agent,
                                                               senderID: "agent:li", text: "Li here, I'll take it from here"))
                }
            }
            try await Task.sleep(for: pause)
        }
    }

    static func appendRetrying(_ store: any BackendStore, _ m: NewMessage) async throws {
        for attempt in 1... {
            do {
                try await store.append(m)
                return
            } catch let e as StoreError where e.isTransient && attempt < 600 {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Counts rows: no customer message lost or reordered, the replies exactly once and in
    /// order, none after the agent, one handoff notice and one notification per crossing.
    static func verify(_ store: any NotificationStore & BackendStore, conversations: Int, perConversation: Int) async throws {
        var problems: [String] = []
        var handoffs = 0
        for c in 0..<conversations {
            let t = try await store.transcript(conversation: "c\(c)")
            let customer = t.filter { $0.from == .customer }.map(\.id)
            if customer != (0..<perConversation).map({ "c\(c)-m\($0)" }) { problems.append("c\(c): customer messages lost or reordered") }
            let replies = t.filter { $0.from == .bot }.map(\.text)
            let notices = t.filter { $0.from == .system }
            if let agent = t.first(where: { $0.from == .agent }) {
                // Taken over after the 2nd customer message: at most the replies before it, none after.
                if t.contains(where: { $0.seq > agent.seq && ($0.from == .bot || $0.from == .system) }) {
                    problems.append("c\(c): the bot spoke after the agent")
                }
                if !["one", "two"].starts(with: replies) && replies != ["one", "two"] { problems.append("c\(c): replies \(replies)") }
            } else {
                if replies != ["one", "two", "three"] { problems.append("c\(c): replies \(replies) (lost, duplicated or out of order)") }
                if notices.count != 1 { problems.append("c\(c): \(notices.count) handoff notices") }
                handoffs += notices.count
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        #expect(handoffs == conversations * 4 / 5)
        let notifications = try await store.notifications(after: 0, limit: 100_000)
        #expect(notifications.count == conversations * 4 / 5, "one notification per handoff")
    }
}

final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

import Synchronization
