import Foundation
import Testing
import UsherEngine
import UsherStore
import UsherStoreTestKit
@testable import UsherSQLite

@Suite("SQLite store: group commit")
struct GroupCommitTests {
    @Test func aConflictInsideABatchDoesNotUndoTheOthers() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        let a = try await store.append(Fixture.customer("a", "one"))
        let b = try await store.append(Fixture.customer("b", "two"))
        let c = try await store.append(Fixture.customer("c", "three"))
        #expect(try await store.commit(Fixture.commit(b, after: nil, reply: "b1")) == .committed)
        let b2 = try await store.append(Fixture.customer("b", "again"))

        // b2's commit was decided on a state read before b's commit: stale.
        let batch = [Fixture.commit(a, after: nil, reply: "A"),
                     Fixture.commit(b2, after: nil, reply: "B-stale"),
                     Fixture.commit(c, after: nil, reply: "C"),
                     Fixture.commit(b, after: nil, reply: "b1")]
        let results = try await store.commit(batch: batch)
        #expect(results == [.committed, .conflict, .committed, .duplicate])
        #expect(try await store.transcript(conversation: "a").map(\.text) == ["one", "A"])
        #expect(try await store.transcript(conversation: "c").map(\.text) == ["three", "C"])
        #expect(try await store.transcript(conversation: "b").map(\.text) == ["two", "b1", "again"],
                "nothing of the conflicting commit")
        #expect(try await store.state(bot: Fixture.bot.id, conversation: "b")?.version == 1)
        #expect(try await store.pending(bot: Fixture.bot.id, after: 0, limit: 10).map(\.id) == [b2.id])
        #expect(store.statistics.commits == 3)
    }

    @Test func laterCommitsInABatchSeeEarlierOnes() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        let m1 = try await store.append(Fixture.customer("c", "1"))
        let m2 = try await store.append(Fixture.customer("c", "2"))
        let c1 = Fixture.commit(m1, after: nil, reply: "r1")
        let c2 = Fixture.commit(m2, after: c1.state, reply: "r2")
        // Out of order inside the batch: m2 first cannot commit, m1 then can.
        #expect(try await store.commit(batch: [c2, c1]) == [.outOfOrder, .committed])
        // m1 done already: m2, decided from the state c1 decided, is decided again (`BatchLinks`).
        #expect(try await store.commit(batch: [c1, c2]) == [.duplicate, .conflict])
        let stored = try await store.state(bot: Fixture.bot.id, conversation: "c")
        #expect(try await store.commit(batch: [Fixture.commit(m2, after: stored, reply: "r2")]) == [.committed])
        #expect(try await store.state(bot: Fixture.bot.id, conversation: "c")?.version == 2)
        #expect(try await store.transcript(conversation: "c").map(\.text) == ["1", "2", "r1", "r2"])
        #expect(try await store.pending(bot: Fixture.bot.id, after: 0, limit: 10).isEmpty)
    }

    @Test func aFailingCommitIsRolledBackAloneAndReported() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        let a = try await store.append(Fixture.customer("a", "fine"))
        let b = try await store.append(Fixture.customer("b", "poison"))
        let c = try await store.append(Fixture.customer("c", "fine too"))
        try await store.perform { db in try db.setLengthLimit(1_000) }
        let batch = [Fixture.commit(a, after: nil, reply: "A"),
                     Fixture.commit(b, after: nil, reply: String(repeating: "x", count: 5_000)),
                     Fixture.commit(c, after: nil, reply: "C")]
        await #expect {
            try await store.commit(batch: batch)
        } throws: { error in
            guard let e = error as? StoreError else { return false }
            return e.code == "batch-partly-failed" && e.message.contains(b.id)
        }
        #expect(try await store.transcript(conversation: "a").map(\.text) == ["fine", "A"])
        #expect(try await store.transcript(conversation: "b").map(\.text) == ["poison"], "nothing of the failed commit")
        #expect(try await store.state(bot: Fixture.bot.id, conversation: "b") == nil)
        #expect(try await store.transcript(conversation: "c").map(\.text) == ["fine too", "C"])
        #expect(try await store.pending(bot: Fixture.bot.id, after: 0, limit: 10).map(\.id) == [b.id])
        #expect(store.statistics.commits == 2, "the first try, rolled back whole, counts for nothing")
        // Retrying the batch is safe: the written commits are duplicates.
        try await store.perform { db in try db.setLengthLimit(1_000_000_000) }
        #expect(try await store.commit(batch: batch) == [.duplicate, .committed, .duplicate])
    }

    @Test func theDefaultImplementationCommitsOneByOne() async throws {
        let store = InMemoryStore()
        let m1 = try await store.append(Fixture.customer("c", "1"))
        let m2 = try await store.append(Fixture.customer("c", "2"))
        let c1 = Fixture.commit(m1, after: nil, reply: "r1")
        let c2 = Fixture.commit(m2, after: c1.state, reply: "r2")
        #expect(try await store.commit(batch: [c2, c1, c2, c1]) == [.outOfOrder, .committed, .committed, .duplicate])
        let states = try await store.states(bot: Fixture.bot.id, conversations: ["c", "nope", "c"])
        #expect(states.keys.sorted() == ["c"] && states["c"]?.version == 2)
    }

    @Test func statesInOneQuery() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        var commits: [Commit] = []
        for i in 0..<50 {
            let m = try await store.append(Fixture.customer("c\(i)", "hi \(i)"))
            var c = Fixture.commit(m, after: nil, reply: "r")
            c.state.tags = ["t\(i)", "quote \" and \\ and \n"]
            c.state.metadata = ["order": "\(i)", "emoji": "🙂"]
            commits.append(c)
        }
        #expect(try await store.commit(batch: commits).allSatisfy { $0 == .committed })
        let ids = (0..<60).map { "c\($0)" }
        let states = try await store.states(bot: Fixture.bot.id, conversations: ids)
        #expect(states.count == 50)
        for c in commits { #expect(states[c.inbound.conversationID] == c.state) }
        #expect(try await store.states(bot: "other", conversations: ids).isEmpty)
        #expect(try await store.states(bot: Fixture.bot.id, conversations: []).isEmpty)
    }
}
