import Foundation
@_spi(Bench) import UsherSQLite

/// The ceiling: the per-message transaction shape (pending read, state read, commit with one
/// outgoing message) written straight against the C API, with exactly the store's SQL and a
/// state JSON encoded once up front.
enum BareLoop {
    /// A run: messages per second, and where a message's time goes at COMMIT.
    struct Run {
        var rate: Double
        /// Time in the COMMIT statements (writing the dirty pages to the WAL, and the automatic
        /// checkpoints that copy them into the file), per message.
        var commitMicros: Double
        /// Pages written per message: each page a transaction dirties is written once.
        var pagesPerMessage: Double
        /// The checkpointer's work, when checkpoints are off the commit path.
        var checkpoints: WALCheckpointer.Statistics?
    }

    /// How the loop's connection is set up: the store's checkpoint arrangement and the tuning.
    struct Setup: Sendable {
        /// As `SQLiteStore.Options.checkpointPages`: a `WALCheckpointer` at this many pages, or
        /// (0) SQLite's automatic checkpoints in COMMIT.
        var checkpointPages = SQLiteStore.Options().checkpointPages
        var tuning = Tuning()
    }

    static func run(path: String, messages: Int, synchronous: String, setup: Setup) throws -> Double {
        try loop(path: path, messages: messages, synchronous: synchronous, batch: 1, setup: setup).rate
    }

    /// The group-commit ceiling: `batch` messages per transaction (no savepoints: the store
    /// takes them only to redo a batch in which a commit failed).
    static func grouped(path: String, messages: Int, synchronous: String, batch: Int, setup: Setup) throws -> Run {
        try loop(path: path, messages: messages, synchronous: synchronous, batch: batch, setup: setup)
    }

    private static func loop(path: String, messages: Int, synchronous: String, batch: Int, setup: Setup) throws -> Run {
        let checkpointer = setup.checkpointPages > 0
            ? try WALCheckpointer(path: path, synchronous: synchronous, pages: setup.checkpointPages) : nil
        let db = RawDB(path: path, synchronous: synchronous, tuning: setup.tuning, checkpointer: checkpointer)
        defer { db.close() }
        let pending = db.prepare(StoreSQL.pending)
        let state = db.prepare(StoreSQL.state)
        let meta = db.prepare(StoreSQL.stateMeta)
        let earlier = db.prepare(StoreSQL.earlierUndone)
        let conversation = db.prepare(StoreSQL.updateConversationOnCommit)
        let agentAfter = db.prepare(StoreSQL.agentAfter)
        let outgoing = db.prepare(StoreSQL.insertOutgoing)
        let updateState = db.prepare(StoreSQL.updateState)
        let insertState = db.prepare(StoreSQL.insertState)
        let bot = Workload.bot.id
        let json = Workload.sampleStateJSON
        var versions: [String: Int64] = [:]
        var cursor: Int64 = 0
        var done = 0
        var inCommit = Duration.zero
        let pagesBefore = db.pagesWritten
        let start = ContinuousClock.now
        while done < messages {
            // The pending read: `batch` messages (1 in the per-message loop).
            var rows: [(seq: Int64, id: String, conv: String)] = []
            db.bind(pending, 1, cursor); db.bind(pending, 2, bot); db.bind(pending, 3, Int64(min(batch, messages - done)))
            while db.step(pending) {
                rows.append((db.int64(pending, 0), db.text(pending, 1), db.text(pending, 2)))
                _ = db.text(pending, 7)
            }
            db.reset(pending)
            if rows.isEmpty { break }
            // The state reads.
            for r in rows {
                db.bind(state, 1, bot); db.bind(state, 2, r.conv)
                if db.step(state) { _ = db.bytes(state, 0) }
                db.reset(state)
            }
            let now = Date().timeIntervalSince1970
            db.run(StoreSQL.begin)
            for (seq, id, conv) in rows {
                let version = versions[conv, default: 0]
                db.bind(meta, 1, bot); db.bind(meta, 2, conv)
                var lastSeq: Int64 = 0
                var exists = false
                if db.step(meta) { precondition(db.int64(meta, 0) == version); lastSeq = db.int64(meta, 2); exists = true }
                db.reset(meta)
                precondition(seq > lastSeq)
                db.bind(earlier, 1, conv); db.bind(earlier, 2, lastSeq); db.bind(earlier, 3, seq)
                precondition(!db.step(earlier)); db.reset(earlier)
                db.bind(conversation, 1, conv); db.bind(conversation, 2, "u-1"); db.bind(conversation, 5, "bot")
                db.bind(conversation, 6, Int64(0)); db.bind(conversation, 7, version + 1); db.bind(conversation, 8, "[]")
                db.bind(conversation, 9, "{}"); db.bind(conversation, 10, now)
                _ = db.step(conversation); db.reset(conversation)
                db.bind(agentAfter, 1, conv); db.bind(agentAfter, 2, seq)
                precondition(!db.step(agentAfter)); db.reset(agentAfter)
                db.bind(outgoing, 1, "\(bot):\(id):0"); db.bind(outgoing, 2, conv); db.bind(outgoing, 3, "bot")
                db.bind(outgoing, 4, "bot:bench"); db.bind(outgoing, 5, "Bench")
                db.bind(outgoing, 6, "Thanks for reaching out—we're here to help."); db.bind(outgoing, 7, now)
                db.bind(outgoing, 8, "opening")
                _ = db.step(outgoing); db.reset(outgoing)
                let upsertState = exists ? updateState : insertState
                db.bind(upsertState, 1, bot); db.bind(upsertState, 2, conv); db.bind(upsertState, 3, version + 1)
                db.bind(upsertState, 4, "bot"); db.bind(upsertState, 5, seq)
                json.withUnsafeBufferPointer { db.bind(upsertState, 6, bytes: $0) }
                db.bind(upsertState, 7, "v1"); db.bind(upsertState, 8, now)
                _ = db.step(upsertState); db.reset(upsertState)
                versions[conv] = version + 1
                cursor = seq
                done += 1
            }
            let committing = ContinuousClock.now
            db.run("COMMIT")
            inCommit += ContinuousClock.now - committing
        }
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        precondition(done == messages, "bare loop did \(done) of \(messages)")
        return Run(rate: Double(done) / seconds, commitMicros: inCommit / .microseconds(1) / Double(done),
                   pagesPerMessage: Double(db.pagesWritten - pagesBefore) / Double(done), checkpoints: checkpointer?.statistics)
    }
}

extension Duration {
    /// In milliseconds.
    var ms: Double { self / .milliseconds(1) }
}
