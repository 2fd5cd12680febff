import Foundation
import Testing
import UsherEngine
import UsherStore
@_spi(Bench) @testable import UsherSQLite

/// A reader on another connection holds its snapshots for a while (real time) as the writer
/// commits and checkpoints run — system tests (`make system`).
@Suite("SQLite store: a reader's snapshots while checkpoints run")
struct SnapshotTests {
    @Test func aReaderSeesConsistentSnapshotsWhileCheckpointsRun() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path, options: .init(checkpointPages: 50))
        try await CheckpointerTests.work(store, count: 10, conversations: 10, batch: 10, prefix: "seed")
        let writer = Task { try await CheckpointerTests.work(store, count: 1_500, conversations: 100, batch: 25) }

        // Another connection, as another process would have. In one snapshot, every customer
        // message at or below its conversation's watermark has exactly one reply.
        let reader = try SQLiteConnection(path: path)
        defer { reader.close() }
        try reader.setBusyTimeout(milliseconds: 5_000)
        let replies = "SELECT count(*) FROM messages WHERE sender_type = 'bot'"
        let done = """
            SELECT count(*) FROM messages m JOIN bot_state s ON s.bot = 'b' AND s.conversation_id = m.conversation_id
            WHERE m.sender_type = 'customer' AND m.seq <= s.last_seq
            """
        var reads = 0, pinned = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            try reader.execute("BEGIN")
            let r = try reader.integer(replies)
            let d = try reader.integer(done)
            #expect(r == d, "a snapshot with \(r) replies and \(d) messages done")
            if reads % 20 == 0 {
                // Hold the snapshot while the writer commits and checkpoints run: it does not move.
                try await Task.sleep(for: .milliseconds(30))
                #expect(try reader.integer(replies) == r)
                pinned += 1
            }
            try reader.execute("COMMIT")
            reads += 1
            if r == 1_510 { break }
            try await Task.sleep(for: .milliseconds(1))
        }
        try await writer.value
        #expect(pinned > 1)
        let s = store.statistics
        #expect(s.commits == 1_510)
        #expect(s.checkpoints > 0)
        // The pinned snapshots held the WAL past its hard limit (200 pages) at times, and the
        // RESTART checkpoints brought it back: it did not grow with the commits.
        #expect(s.largestWAL < 1_000, "\(String(describing: store.checkpointer?.statistics))")
        try await store.close()
        #expect(try reader.integer(replies) == 1_510)
        #expect(try reader.text("PRAGMA integrity_check") == "ok")
    }
}
