import Foundation
import Testing
import UsherEngine
import UsherStore
@testable import UsherSQLite

@Suite("SQLite store: several connections on one file")
struct MultiConnectionTests {
    @Test func racingCommitsFromTwoStoresCommitOnce() async throws {
        let dir = TempDir()
        let path = dir.path()
        let a = try await SQLiteStore(path: path)
        let b = try await SQLiteStore(path: path)
        defer { Task { try? await a.close(); try? await b.close() } }
        for round in 0..<20 {
            let m = try await a.append(Fixture.customer("c\(round)", "hello"))
            let commit = Fixture.commit(m, after: nil, reply: "hi")
            let results = try await withThrowingTaskGroup(of: CommitResult.self) { group in
                for i in 0..<8 {
                    let store = i % 2 == 0 ? a : b
                    group.addTask { try await store.commit(commit) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.filter { $0 == .committed }.count == 1, "round \(round): \(results)")
            #expect(results.filter { $0 == .duplicate }.count == 7)
            #expect(try await b.transcript(conversation: "c\(round)").filter { $0.from == .bot }.count == 1)
        }
        #expect(a.statistics.commits + b.statistics.commits == 20)
    }

    @Test func twoWorkersDecidingTheSameConversationNeverDoubleReply() async throws {
        // Two "workers" (one store each) race through the same 200 messages of 10 conversations,
        // each reading state, deciding and committing, retrying on conflict.
        let dir = TempDir()
        let path = dir.path()
        let a = try await SQLiteStore(path: path)
        let b = try await SQLiteStore(path: path)
        defer { Task { try? await a.close(); try? await b.close() } }
        for i in 0..<200 { try await a.append(Fixture.customer("c\(i % 10)", "m\(i)", id: "m\(i)")) }

        @Sendable func work(_ store: SQLiteStore) async throws -> Int {
            var committed = 0
            while true {
                let batch = try await store.pending(bot: Fixture.bot.id, after: 0, limit: 20)
                if batch.isEmpty { return committed }
                for m in batch {
                    let old = try await store.state(bot: Fixture.bot.id, conversation: m.conversationID)
                    let r = try await store.commit(Fixture.commit(m, after: old, reply: "re: \(m.text)"))
                    if r == .committed { committed += 1 }
                    if r != .committed && r != .duplicate { break }   // conflict/out of order: read again
                }
            }
        }
        async let x = work(a)
        async let y = work(b)
        let (ca, cb) = try await (x, y)
        #expect(ca + cb == 200, "every message committed once (\(ca) + \(cb))")
        for c in 0..<10 {
            let t = try await a.transcript(conversation: "c\(c)")
            let replies = t.filter { $0.from == .bot }.map(\.text)
            #expect(replies == t.filter { $0.from == .customer }.map { "re: \($0.text)" }, "one reply each, in order")
            #expect(try await b.state(bot: Fixture.bot.id, conversation: "c\(c)")?.customerMessages == 20)
        }
    }

    @Test func aClosedStoreFailsCalls() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        try await store.close()
        try await store.close()   // idempotent
        await #expect { try await store.latestSeq() } throws: { ($0 as? StoreError)?.code == "closed" }
    }

    @Test func callsOnTheStoresOwnExecutorRunInline() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        try await withTaskExecutorPreference(store.taskExecutor) {
            #expect(store.thread.isCurrent)
            let m = try await store.append(Fixture.customer("c", "hello"))
            #expect(try await Fixture.decideAndCommit(store, m) == .committed)
            #expect(store.thread.isCurrent)
        }
        #expect(try await store.transcript(conversation: "c").count == 2)
    }
}
