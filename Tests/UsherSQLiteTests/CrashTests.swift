import Foundation
import Testing
import UsherEngine
import UsherStore
@testable import UsherSQLite

@Suite("SQLite store: crash safety at the SQL level")
struct CrashTests {
    /// Starts the `sqlite3` shell on `path`, feeds it `sql`, waits until it prints `ready`
    /// (so the statements before it have run) and kills it with SIGKILL, mid-transaction.
    static func killMidTransaction(path: String, cli: String, sql: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cli)
        p.arguments = [path]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        input.fileHandleForWriting.write(Data((sql + "\n.print ready\n").utf8))
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("ready") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        #expect(String(decoding: seen, as: UTF8.self).contains("ready"), "the shell ran the statements")
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        #expect(p.terminationReason == .uncaughtSignal)
    }

    @Test(.enabled(if: sqlite3CLI != nil, "needs the sqlite3 shell as a second process"))
    func aProcessKilledMidTransactionLeavesNoTraceAndNoLock() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path, options: .init(busyTimeout: .milliseconds(200), busyRetries: 0))
        defer { Task { try? await store.close() } }
        let m = try await store.append(Fixture.customer("c", "hello"))
        let before = try await store.latestSeq()

        // A writer that gets far: thousands of rows (enough to spill pages into the WAL), its
        // own done mark and reply for `m` — then dies before COMMIT.
        try Self.killMidTransaction(path: path, cli: sqlite3CLI!, sql: """
            BEGIN IMMEDIATE;
            INSERT INTO conversations (id, created_at, updated_at) VALUES ('ghost', 0, 0);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
            INSERT INTO messages (id, conversation_id, sender_type, content, created_at)
            SELECT 'ghost-' || i, 'ghost', 'customer', hex(randomblob(100)), 0 FROM n;
            INSERT INTO bot_state (bot, conversation_id, version, owner, last_seq, state, updated_at) VALUES ('b', 'c', 1, 'bot', \(m.seq), '{}', 0);
            INSERT INTO messages (id, conversation_id, sender_type, content, created_at, idempotency_key)
            VALUES ('b:\(m.id):0', 'c', 'bot', 'half a reply', 0, 'b:\(m.id):0');
            """)

        // Nothing of it is visible, the file is sound, and the lock died with the process.
        #expect(try await store.latestSeq() == before)
        #expect(try await store.transcript(conversation: "ghost").isEmpty)
        #expect(try await store.pending(bot: Fixture.bot.id, after: 0, limit: 10).map(\.id) == [m.id])
        let check = try await store.perform { db in try db.text("PRAGMA integrity_check") }
        #expect(check == "ok")
        let fk = try await store.perform { db in try db.integer("SELECT count(*) FROM pragma_foreign_key_check") }
        #expect(fk == 0)
        #expect(try await Fixture.decideAndCommit(store, m, reply: "hi") == .committed)
        #expect(store.statistics.busyRetries == 0, "no stale lock to wait for")
        #expect(try await store.transcript(conversation: "c").map(\.text) == ["hello", "hi"])
    }

    @Test(.enabled(if: sqlite3CLI != nil, "needs the sqlite3 shell as a second process"))
    func aProcessKilledAfterCommitKeepsEverything() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path)
        defer { Task { try? await store.close() } }
        try await store.append(Fixture.customer("c", "hello"))
        try Self.killMidTransaction(path: path, cli: sqlite3CLI!, sql: """
            BEGIN IMMEDIATE;
            INSERT INTO messages (id, conversation_id, sender_type, content, created_at) VALUES ('late', 'c', 'customer', 'still here', 0);
            COMMIT;
            BEGIN IMMEDIATE;
            INSERT INTO messages (id, conversation_id, sender_type, content, created_at) VALUES ('lost', 'c', 'customer', 'gone', 0);
            """)
        #expect(try await store.transcript(conversation: "c").map(\.text) == ["hello", "still here"])
        #expect(try await store.pending(bot: Fixture.bot.id, after: 0, limit: 10).count == 2)
    }

    @Test func aConnectionClosedMidTransactionRollsBack() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path)
        defer { Task { try? await store.close() } }
        let m = try await store.append(Fixture.customer("c", "hello"))
        let other = try SQLiteConnection(path: path)
        try other.execute("""
            BEGIN IMMEDIATE;
            INSERT INTO bot_state (bot, conversation_id, version, owner, last_seq, state, updated_at) VALUES ('b', 'c', 1, 'bot', \(m.seq), '{}', 0);
            """)
        other.close()   // as if its process ended: no COMMIT
        #expect(try await store.pending(bot: Fixture.bot.id, after: 0, limit: 10).map(\.id) == [m.id])
        #expect(try await Fixture.decideAndCommit(store, m) == .committed)
    }
}
