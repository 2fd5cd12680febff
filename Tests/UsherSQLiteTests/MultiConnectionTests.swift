import Foundation
import Testing
import UsherEngine
import UsherStore
@testable import UsherSQLite

@Suite("SQLite store: several connections and processes on one file")
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

    @Test func aWriteThroughAnotherStoreOfThisProcessWakesAtOnce() async throws {
        let dir = TempDir()
        let path = dir.path()
        let waiter = try await SQLiteStore(path: path, options: .init(pollInterval: .seconds(30), idlePollInterval: .seconds(30)))
        let writer = try await SQLiteStore(path: path)
        defer { Task { try? await waiter.close(); try? await writer.close() } }
        let head = try await waiter.latestSeq()
        let clock = ContinuousClock()
        let started = clock.now
        async let waited: Void = waiter.waitForChanges(after: head, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(50))
        try await writer.append(Fixture.customer("c", "wake up"))
        try await waited
        let elapsed = clock.now - started
        // Polling is set to 30 s here: only the in-process signal can make this quick (the bound
        // leaves room for a test run that fills the cores at its start).
        #expect(elapsed < .seconds(10), "woke after \(elapsed)")
    }

    @Test func aWriteByAnotherConnectionIsSeenByPolling() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path)
        defer { Task { try? await store.close() } }
        try await store.append(Fixture.customer("c", "first"))
        let head = try await store.latestSeq()
        let clock = ContinuousClock()
        let started = clock.now
        async let waited: Void = store.waitForChanges(after: head, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(100))
        // Another connection — no in-process signal, as from another process.
        let other = try SQLiteConnection(path: path)
        try other.execute("""
            INSERT INTO messages (id, conversation_id, sender_type, content, created_at)
            VALUES ('from-outside', 'c', 'customer', 'hello from outside', 0)
            """)
        other.close()
        try await waited
        #expect(clock.now - started < .seconds(15), "returned long before the 60 s timeout")
        #expect(try await store.latestSeq() > head)
        #expect(store.statistics.polls > 1)
    }

    @Test func waitingWithoutChangesTimesOut() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        try await store.append(Fixture.customer("c", "x"))
        let head = try await store.latestSeq()
        let clock = ContinuousClock()
        let started = clock.now
        try await store.waitForChanges(after: head, timeout: .milliseconds(300))
        let elapsed = clock.now - started
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(10), "\(elapsed)")
        // Already newer: returns at once.
        let t = clock.now
        try await store.waitForChanges(after: head - 1, timeout: .seconds(5))
        #expect(clock.now - t < .milliseconds(500))
    }

    @Test func busyIsRetriedWithBackoffAndSucceeds() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path, options: .init(busyTimeout: .milliseconds(10), busyRetries: 10,
                                                                     retryBackoff: .milliseconds(20)))
        defer { Task { try? await store.close() } }
        let m = try await store.append(Fixture.customer("c", "hello"))

        // Another connection holds the write lock for 300 ms.
        let holder = try SQLiteConnection(path: path)
        try holder.execute("BEGIN IMMEDIATE; INSERT INTO conversations (id, created_at, updated_at) VALUES ('held', 0, 0);")
        let released = Task.detached {
            try await Task.sleep(for: .milliseconds(300))
            try holder.execute("COMMIT")
            holder.close()
        }
        let clock = ContinuousClock()
        let started = clock.now
        let result = try await store.commit(Fixture.commit(m, after: nil, reply: "hi"))
        try await released.value
        #expect(result == .committed)
        #expect(store.statistics.busyRetries > 0, "SQLite's own 10 ms wait was not enough: our retries did it")
        #expect(clock.now - started >= .milliseconds(250))
        #expect(try await store.transcript(conversation: "held").isEmpty)
    }

    @Test func busyForLongerThanTheRetriesIsATransientError() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path, options: .init(busyTimeout: .milliseconds(5), busyRetries: 2,
                                                                     retryBackoff: .milliseconds(5)))
        defer { Task { try? await store.close() } }
        let m = try await store.append(Fixture.customer("c", "hello"))
        let holder = try SQLiteConnection(path: path)
        try holder.execute("BEGIN IMMEDIATE; INSERT INTO conversations (id, created_at, updated_at) VALUES ('held', 0, 0);")
        defer { try? holder.execute("ROLLBACK"); holder.close() }
        await #expect {
            try await store.commit(Fixture.commit(m, after: nil, reply: "hi"))
        } throws: { error in
            guard let e = error as? StoreError else { return false }
            return e.code == "busy" && e.isTransient
        }
        #expect(store.statistics.busyRetries == 2)
        // Reads go on in WAL mode while another connection writes.
        #expect(try await store.pending(bot: Fixture.bot.id, after: 0, limit: 10).map(\.id) == [m.id])
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
