import Foundation
import Testing
import UsherEngine
import UsherStore
@testable import UsherSQLite

/// Waiting for another connection's write, for a timeout, for the write lock: real time, waited
/// for — system tests (`make system`).
@Suite("SQLite store: waiting for writes and for the lock")
struct WaitingTests {
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
        // Already newer: returns at once, not at a timeout far beyond any delay of a busy machine.
        let t = clock.now
        try await store.waitForChanges(after: head - 1, timeout: .seconds(60))
        #expect(clock.now - t < .seconds(30))
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
}
