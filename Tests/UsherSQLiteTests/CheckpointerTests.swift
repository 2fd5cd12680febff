import Foundation
import Testing
import UsherEngine
import UsherStore
@_spi(Bench) @testable import UsherSQLite

@Suite("SQLite store: checkpoints off the commit path")
struct CheckpointerTests {
    /// `count` customer messages over `conversations`, then every one decided and committed in
    /// batches of `batch`, as the worker does.
    static func work(_ store: SQLiteStore, count: Int, conversations: Int, batch: Int, prefix: String = "m") async throws {
        for i in 0..<count {
            try await store.append(Fixture.customer("c\(i % conversations)", "message \(i)", id: "\(prefix)\(i)"))
        }
        var cursor: Int64 = 0
        while true {
            let ms = try await store.pending(bot: Fixture.bot.id, after: cursor, limit: batch)
            guard let last = ms.last else { break }
            var states = try await store.states(bot: Fixture.bot.id, conversations: ms.map(\.conversationID))
            var commits: [Commit] = []
            for m in ms {
                let c = Fixture.commit(m, after: states[m.conversationID], reply: "reply to \(m.id)")
                states[m.conversationID] = c.state
                commits.append(c)
            }
            let results = try await store.commit(batch: commits)
            #expect(results.allSatisfy { $0 == .committed }, "\(Set(results))")
            cursor = last.seq
        }
    }

    static func walBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int) ?? 0
    }

    @Test func theWALStaysBoundedWhileCommitsRun() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path, options: .init(checkpointPages: 100))
        let checkpointer = try #require(store.checkpointer)
        #expect(checkpointer.hardLimit == 400)
        // ≈ 2,800 pages written in all: seven times the hard limit, were nothing copied back.
        try await Self.work(store, count: 2_000, conversations: 200, batch: 50)
        let s = store.statistics
        #expect(s.commits == 2_000)
        #expect(s.checkpoints > 0)
        #expect(s.largestWAL >= 100, "the threshold was reached: \(s)")
        #expect(s.largestWAL < 800, "the WAL stays near its threshold: \(checkpointer.statistics)")
        // SQLite reuses the WAL file from its start, so its size is the longest the WAL ever was.
        #expect(Self.walBytes(path) <= 32 + 800 * (4096 + 24))
        try await store.close()
    }

    @Test func closeStopsTheThreadAndItsConnection() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path, options: .init(checkpointPages: 20))
        let checkpointer = try #require(store.checkpointer)
        try await Self.work(store, count: 300, conversations: 30, batch: 30)
        #expect(!checkpointer.isStopped)
        try await store.close()
        #expect(checkpointer.isStopped)
        // The last connection to close checkpoints the file and removes the WAL: neither the
        // writer's nor the checkpointer's connection is left open.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        // Opened again, the file holds everything.
        let again = try await SQLiteStore(path: path)
        #expect(try await again.pending(bot: Fixture.bot.id, after: 0, limit: 10).isEmpty)
        #expect(try await again.transcript(conversation: "c7").filter { $0.from == .bot }.count == 10)
        try await again.close()
    }

    @Test func checkpointsOffOrInMemory() async throws {
        let dir = TempDir()
        let off = try await SQLiteStore(path: dir.path(), options: .init(checkpointPages: 0))
        #expect(off.checkpointer == nil)
        try await Self.work(off, count: 50, conversations: 5, batch: 10)
        #expect(off.statistics.checkpoints == 0)
        try await off.close()
        let memory = try await SQLiteStore(path: ":memory:")
        #expect(memory.checkpointer == nil)
        try await memory.close()
    }
}
