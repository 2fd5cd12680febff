import Foundation
import Testing
import UsherEngine
import UsherStore
@testable import UsherSQLite

@Suite("SQLite store: what a commit writes")
struct CommitWriteTests {
    /// The conversation row follows the state, and is left alone when nothing in it changes.
    @Test func theConversationRowIsWrittenOnlyWhenItChanges() async throws {
        let dir = TempDir()
        let clock = Locked(Date(timeIntervalSince1970: 100))
        let store = try await SQLiteStore(path: dir.path(), options: .init(clock: { clock.withLock { $0 } }))
        defer { Task { try? await store.close() } }
        func row() async throws -> (count: Int64, tags: String?, updated: Int64) {
            try await store.perform { db in
                let s = try db.statement(sql: "SELECT customer_message_count, tags, updated_at FROM conversations WHERE id = 'c'")
                defer { s.reset() }
                _ = try s.step()
                return (s.int64(0), s.optionalText(1), s.int64(2))
            }
        }
        let m1 = try await store.append(Fixture.customer("c", "one", at: Date(timeIntervalSince1970: 50)))
        clock.withLock { $0 = Date(timeIntervalSince1970: 200) }
        #expect(try await Fixture.decideAndCommit(store, m1) == .committed)
        #expect(try await row() == (1, "[]", 200))

        // An agent's message: the count stays, the owner becomes `agent` — a change.
        let agent = try await store.append(NewMessage(conversationID: "c", from: .agent, senderID: "agent:li", text: "hi",
                                                      at: Date(timeIntervalSince1970: 60)))
        clock.withLock { $0 = Date(timeIntervalSince1970: 300) }
        #expect(try await Fixture.decideAndCommit(store, agent, reply: nil) == .committed)
        #expect(try await row() == (1, "[]", 300))

        // Another agent message changes nothing in the row: it is not written, `updated_at` stays.
        let again = try await store.append(NewMessage(conversationID: "c", from: .agent, senderID: "agent:li", text: "more",
                                                      at: Date(timeIntervalSince1970: 70)))
        clock.withLock { $0 = Date(timeIntervalSince1970: 400) }
        #expect(try await Fixture.decideAndCommit(store, again, reply: nil) == .committed)
        #expect(try await row() == (1, "[]", 300))
        let owner = try await store.perform { db in try db.text("SELECT owner FROM conversations WHERE id = 'c'") }
        #expect(owner == "agent")
    }

    /// A conversation the backend never wrote gets its row from the commit (the upsert).
    @Test func aCommitWritesAMissingConversationRow() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        let m = try await store.append(Fixture.customer("c", "one"))
        try await store.perform { db in
            try db.execute("PRAGMA foreign_keys = OFF; DELETE FROM conversations; PRAGMA foreign_keys = ON")
        }
        #expect(try await store.conversation("c") == nil)
        #expect(try await Fixture.decideAndCommit(store, m) == .committed)
        let count = try await store.perform { db in
            try db.integer("SELECT customer_message_count FROM conversations WHERE id = 'c'")
        }
        #expect(count == 1)
    }
}
