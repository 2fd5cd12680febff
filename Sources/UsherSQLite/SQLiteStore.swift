public import Foundation
public import UsherEngine
import UsherJSON
public import UsherStore

/// The embedded store (DESIGN.md §7): the native schema in one SQLite file, in WAL mode.
///
/// - One connection per store, owned by a dedicated thread: every SQLite call runs there, never
///   on the cooperative pool. Calls hop to it and back; a task started with
///   `withTaskExecutorPreference(store.taskExecutor)` runs on that thread and calls inline.
/// - `commit` is one `BEGIN IMMEDIATE` transaction: done mark, per-conversation order and
///   compare-and-set are checked inside it, so several stores on one file — in one process or
///   many — commit each inbound message exactly once. `commit(batch:)` writes a batch in one
///   transaction with a savepoint per commit.
/// - SQLite's `busy_timeout`, then retries with exponential backoff, then a transient
///   `StoreError` with code `busy`.
/// - `waitForChanges` wakes at once for writes made through any store of this process on the
///   same file, and polls `PRAGMA data_version` for writes by other processes.
///
/// See docs/store-sqlite.md for the schema, the pragmas and the multi-process behaviour.
public final class SQLiteStore: SharedStore, SignallingStore, NotificationStore, BackendStore {
    /// The database file.
    public let path: String
    public let options: Options

    let thread: ThreadExecutor
    /// Touched only on `thread`.
    let connection: SQLiteConnection
    /// The reading connection and its thread (`Options.readerConnection`), or nil: reads go to
    /// the writer connection.
    let reader: (thread: ThreadExecutor, connection: SQLiteConnection)?
    let signal: ChangeSignal
    /// Checkpoints the WAL off the commit path (nil for `:memory:` or `checkpointPages` 0).
    let checkpointer: WALCheckpointer?
    private let counters = Locked(Statistics())
    private let lifecycle = Locked(Lifecycle())
    /// Poll bookkeeping, touched only on `thread`.
    private let pollState = PollState()

    private struct Lifecycle {
        var closed = false
        var lastChange = ContinuousClock.now
    }

    /// Opens the database file at `path` (created if missing), sets WAL mode and the pragmas, and
    /// migrates it to the current schema. Fails with code `schema-too-new` when the file was
    /// written by a newer build.
    public init(path: String, options: Options = Options()) async throws {
        guard !path.isEmpty else { throw StoreError("bad-url", "the SQLite store needs a file path") }
        self.path = path
        self.options = options
        let thread = ThreadExecutor(name: "usher-sqlite")
        self.thread = thread
        self.signal = ChangeSignal.shared(for: path)
        let now = options.clock()
        do {
            let (connection, applied, checkpointer) = try await withCheckedThrowingContinuation {
                (c: CheckedContinuation<(SQLiteConnection, [Int], WALCheckpointer?), any Error>) in
                thread.submit {
                    c.resume(with: Result { try Self.open(path: path, options: options, now: now) })
                }
            }
            self.connection = connection
            self.checkpointer = checkpointer
            counters.withLock { $0.migrationsApplied = applied }
        } catch {
            thread.stop()
            throw error
        }
        if options.readerConnection, path != ":memory:" {
            let readerThread = ThreadExecutor(name: "usher-sqlite-rd")
            do {
                let readerConnection = try await withCheckedThrowingContinuation { (c: CheckedContinuation<SQLiteConnection, any Error>) in
                    readerThread.submit { c.resume(with: Result { try Self.openReader(path: path, options: options) }) }
                }
                reader = (readerThread, readerConnection)
            } catch {
                readerThread.stop()
                let connection = self.connection
                thread.submit { connection.close() }
                thread.stop()
                checkpointer?.stop(then: {})
                throw error
            }
        } else {
            reader = nil
        }
    }

    /// Opens a store from a URL: `sqlite:PATH` (also `sqlite://PATH`, `sqlite:///ABSOLUTE`), with
    /// optional query items `synchronous=normal|full`, `busy_timeout_ms=N` and `checkpoint_pages=N`.
    public static func open(url: String, options: Options = Options()) async throws -> SQLiteStore {
        let (path, options) = try parse(url: url, options: options)
        return try await SQLiteStore(path: path, options: options)
    }

    /// The file path and options a `sqlite:` URL names.
    public static func parse(url: String, options: Options = Options()) throws -> (path: String, options: Options) {
        guard url.hasPrefix("sqlite:") else {
            throw StoreError("bad-url", "'\(url)' is not a SQLite store URL; expected sqlite:PATH")
        }
        var rest = String(url.dropFirst("sqlite:".count))
        if rest.hasPrefix("//") { rest.removeFirst(2) }
        var options = options
        if let q = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: q)...]
            rest = String(rest[..<q])
            for item in query.split(separator: "&") {
                let kv = item.split(separator: "=", maxSplits: 1).map(String.init)
                let key = kv[0], value = kv.count > 1 ? kv[1] : ""
                switch key {
                case "synchronous":
                    guard let s = Options.Synchronous(rawValue: value.uppercased()) else {
                        throw StoreError("bad-url", "synchronous=\(value) in '\(url)': expected normal or full")
                    }
                    options.synchronous = s
                case "busy_timeout_ms":
                    guard let ms = Int(value), ms >= 0 else {
                        throw StoreError("bad-url", "busy_timeout_ms=\(value) in '\(url)': expected milliseconds")
                    }
                    options.busyTimeout = .milliseconds(ms)
                case "checkpoint_pages":
                    guard let pages = Int(value), pages >= 0 else {
                        throw StoreError("bad-url", "checkpoint_pages=\(value) in '\(url)': expected a number of pages (0: SQLite's own checkpoints)")
                    }
                    options.checkpointPages = pages
                default:
                    throw StoreError("bad-url",
                                     "unknown option '\(key)' in '\(url)'; known: synchronous, busy_timeout_ms, checkpoint_pages")
                }
            }
        }
        guard !rest.isEmpty else { throw StoreError("bad-url", "'\(url)' names no file; expected sqlite:PATH") }
        return (rest.removingPercentEncoding ?? rest, options)
    }

    deinit {
        // `close()` is the way out; this only makes sure an unclosed store frees its handle and thread.
        let unclosed = lifecycle.withLock { !$0.closed }
        if unclosed {
            let connection = connection
            thread.submit { connection.close() }
            thread.stop()
            if let reader {
                reader.thread.submit { reader.connection.close() }
                reader.thread.stop()
            }
            checkpointer?.stop(then: {})
        }
    }

    /// Runs on the connection's thread when a task prefers it: start the worker's lanes with
    /// `withTaskExecutorPreference(store.taskExecutor) { … }` and store calls skip two thread hops
    /// each. The engine's decisions then run on that thread too.
    public var taskExecutor: any TaskExecutor { thread }

    /// Counters since the store was opened.
    public var statistics: Statistics {
        var s = counters.withLock { $0 }
        if let c = checkpointer?.statistics {
            s.checkpoints = c.checkpoints + c.restarts + c.writerCheckpoints
            s.largestWAL = c.largestWAL
        }
        return s
    }

    /// The SQLite library's version.
    public static var sqliteVersion: String { SQLiteConnection.libraryVersion }

    /// The schema version of the file.
    public func schemaVersion() async throws -> Int {
        try await perform { db in try Migrator.version(db) }
    }

    // MARK: running on the connection's thread

    private static func open(path: String, options: Options, now: Date) throws -> (SQLiteConnection, [Int], WALCheckpointer?) {
        let db = try SQLiteConnection(path: path)
        do {
            let mode = try configureWriter(db, options)
            let applied = try Migrator.migrate(db, now: now)
            var checkpointer: WALCheckpointer?
            if mode == "wal", options.checkpointPages > 0 {
                let c = try WALCheckpointer(path: path, synchronous: options.synchronous.rawValue, pages: options.checkpointPages,
                                            busyTimeoutMilliseconds: Int(options.busyTimeout.milliseconds))
                db.attach(c)
                checkpointer = c
            }
            return (db, applied, checkpointer)
        } catch {
            db.close()
            throw error
        }
    }

    /// The writer's settings: WAL mode and the pragmas, on a new handle (opened first, or again).
    /// Returns the journal mode.
    @discardableResult
    private static func configureWriter(_ db: SQLiteConnection, _ options: Options) throws -> String? {
        try db.setBusyTimeout(milliseconds: Int(options.busyTimeout.milliseconds))
        let mode = try db.text("PRAGMA journal_mode = WAL")?.lowercased()
        guard mode == "wal" || (db.path == ":memory:" && mode == "memory") else {
            throw StoreError("sqlite-wal", "cannot put '\(db.path)' in WAL mode (journal_mode is \(mode ?? "unknown"))")
        }
        try db.execute("""
            PRAGMA synchronous = \(options.synchronous.rawValue);
            PRAGMA foreign_keys = ON;
            PRAGMA temp_store = MEMORY;
            PRAGMA cache_size = -\(max(1024, options.cacheKiB));
            """)
        return mode
    }

    /// The reading connection: its own, pragmas only (the writer opened, migrated and put the
    /// file in WAL mode), and `query_only`, so that nothing written can go through it.
    private static func openReader(path: String, options: Options) throws -> SQLiteConnection {
        let db = try SQLiteConnection(path: path)
        do {
            try configureReader(db, options)
            return db
        } catch {
            db.close()
            throw error
        }
    }

    private static func configureReader(_ db: SQLiteConnection, _ options: Options) throws {
        try db.setBusyTimeout(milliseconds: Int(options.busyTimeout.milliseconds))
        try db.execute("""
            PRAGMA query_only = ON;
            PRAGMA temp_store = MEMORY;
            PRAGMA cache_size = -\(max(1024, options.cacheKiB));
            """)
    }

    /// Runs a read on the reading connection, as `perform` — on the writer's when there is none,
    /// or when the caller runs on the writer's thread already (`taskExecutor`: no hop at all).
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        guard let reader, !thread.isCurrent else { return try await perform(body) }
        return try await perform(on: reader.thread, reader.connection, body)
    }

    /// Runs `body` on the connection's thread; when SQLite reports busy (after its own
    /// `busy_timeout`), tries again with exponential backoff, up to `options.busyRetries` times.
    /// `body` must leave no transaction open when it throws.
    ///
    /// Before `body`, at most every 250 ms, the path is checked to still name the file open
    /// (`StoreError` `sqlite-file-replaced` when not). After an error that leaves the handle
    /// read-only (`sqlite-readonly`), the next call opens the connection again first, so that it
    /// writes once the file is writable.
    func perform<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await perform(on: thread, connection, body)
    }

    private func perform<T: Sendable>(on thread: ThreadExecutor, _ connection: SQLiteConnection,
                                      _ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        if lifecycle.withLock({ $0.closed }) { throw StoreError.closed(path) }
        var backoff = options.retryBackoff
        var attempt = 0
        let options = options
        let writer = connection === self.connection
        while true {
            do {
                return try await thread.run(stopped: StoreError.closed(path)) {
                    if connection.isStale {
                        do {
                            try connection.reopen { db in
                                if writer { try Self.configureWriter(db, options) } else { try Self.configureReader(db, options) }
                            }
                            connection.isStale = false
                        } catch let replaced as StoreError where replaced.code == StoreError.fileReplacedCode {
                            throw replaced
                        } catch {
                            // Not openable now: the old handle stays, and fails as it did.
                        }
                    }
                    try connection.checkFile()
                    do {
                        return try body(connection)
                    } catch let error as StoreError where error.code == SQLiteConnection.reopenCode {
                        connection.isStale = true
                        throw error
                    }
                }
            } catch let error as StoreError where error.code == "busy" && attempt < options.busyRetries {
                attempt += 1
                counters.withLock { $0.busyRetries += 1 }
                // Full jitter, so that retrying stores do not collide again in step.
                let ms = backoff.milliseconds * Double.random(in: 0.5...1.0)
                try await Task.sleep(for: .microseconds(Int(ms * 1000)))
                backoff = min(backoff * 2, .seconds(1))
            }
        }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction: committed when it returns, rolled back when
    /// it throws.
    static func transaction<T>(_ db: SQLiteConnection, _ body: () throws -> T) throws -> T {
        try db.run(.begin)
        do {
            let value = try body()
            try db.run(.commit)
            return value
        } catch {
            db.rollbackQuietly()
            throw error
        }
    }

    private func changed() {
        lifecycle.withLock { $0.lastChange = .now }
        signal.notify()
    }

    // MARK: ChatStore

    public func pending(bot: String, after cursor: Int64, limit: Int) async throws -> [StoredMessage] {
        try await read { db in
            let s = try db.statement(.pending)
            defer { s.reset() }
            s.bind(1, cursor)
            s.bind(2, bot)
            s.bind(3, limit)
            var out: [StoredMessage] = []
            while try s.step() {
                var m = Self.messageFields(s)
                m.channel = s.optionalText(10)
                m.locale = s.optionalText(11)
                out.append(m)
            }
            return out
        }
    }

    public func latestSeq() async throws -> Int64 {
        try await perform { db in try Self.latest(db) }
    }

    private static func latest(_ db: SQLiteConnection) throws -> Int64 {
        let s = try db.statement(.latestSeq)
        defer { s.reset() }
        return try s.step() ? s.int64(0) : 0
    }

    /// Commits of this process on the file (another process's show only to `waitForChanges(after:)`,
    /// which polls).
    public var changeSignal: ChangeSignal? { signal }

    public func waitForChanges(after seq: Int64, timeout: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var interval = options.pollInterval
        var force = true
        let pollState = pollState
        while true {
            let generation = signal.generation
            let poll = force
            let latest = try await perform { db -> Int64? in
                // data_version changes when another connection (or process) commits.
                let s = try db.statement(.dataVersion)
                defer { s.reset() }
                let version = try s.step() ? s.int64(0) : 0
                let moved = version != pollState.dataVersion
                pollState.dataVersion = version
                return moved || poll ? try Self.latest(db) : nil
            }
            counters.withLock { $0.polls += 1 }
            if let latest, latest > seq {
                lifecycle.withLock { $0.lastChange = clock.now }
                return
            }
            let now = clock.now
            if now >= deadline || Task.isCancelled { return }
            let quiet = now - lifecycle.withLock { $0.lastChange }
            interval = quiet < options.activeWindow ? options.pollInterval : min(options.idlePollInterval, interval * 1.5)
            await signal.wait(since: generation, timeout: min(interval, deadline - now))
            force = signal.generation != generation
        }
    }

    public func cursor(bot: String) async throws -> Int64 {
        try await perform { db in
            let s = try db.statement(.cursor)
            defer { s.reset() }
            s.bind(1, bot)
            return try s.step() ? s.int64(0) : 0
        }
    }

    public func advanceCursor(bot: String) async throws {
        try await perform { db in
            let s = try db.statement(.advanceCursor)
            defer { s.reset() }
            s.bind(1, bot)
            _ = try s.step()
        }
    }

    public func state(bot: String, conversation: String) async throws -> ConversationState? {
        try await perform { db in
            let s = try db.statement(.state)
            defer { s.reset() }
            s.bind(1, bot)
            s.bind(2, conversation)
            guard try s.step() else { return nil }
            return try s.withBytes(0) { try db.decoded.state(bot: bot, conversation: conversation, text: $0) }
        }
    }

    public func states(bot: String, conversations: [String]) async throws -> [String: ConversationState] {
        if conversations.isEmpty { return [:] }
        var w = JSONWriter(capacity: conversations.count * 16)
        w.stringArray(conversations)
        let ids = w.bytes
        return try await read { db in
            let s = try db.statement(.states)
            defer { s.reset() }
            s.bind(1, bot)
            ids.withUnsafeBufferPointer { s.bind(2, bytes: $0) }
            var out: [String: ConversationState] = [:]
            while try s.step() {
                let conversation = s.text(0)
                out[conversation] = try s.withBytes(1) {
                    try db.decoded.state(bot: bot, conversation: conversation, text: $0)
                }
            }
            return out
        }
    }

    public func commit(_ commit: Commit) async throws -> CommitResult {
        let clock = options.clock
        let result = try await perform { db in
            try db.run(.begin)
            do {
                let result = try Self.write(commit, db, now: clock())
                try db.run(result.isWritten ? .commit : .rollback)
                return result
            } catch {
                db.rollbackQuietly()
                throw error
            }
        }
        if result.isWritten {
            counters.withLock { $0.commits += 1 }
            changed()
        }
        return result
    }

    /// One transaction for the whole batch. A conflict, a duplicate or an out-of-order message
    /// writes nothing (the checks come before the writes) and the others still commit. A commit
    /// that fails with an error (a message too big, a constraint) is rolled back alone: the batch
    /// is written again with a savepoint per commit, the rest of it is committed, then the first
    /// such error is thrown (code `batch-partly-failed`) — retrying the batch is safe: the written
    /// commits come back `.duplicate`. Busy after the retries, or an I/O error at COMMIT, writes
    /// nothing.
    public func commit(batch: [Commit]) async throws -> [CommitResult] {
        if batch.isEmpty { return [] }
        let clock = options.clock
        let (results, failure) = try await perform { db -> ([CommitResult], StoreError?) in
            // No savepoints on the way there: each costs a copy of every page its commit touches.
            do {
                return try Self.transaction(db) {
                    let now = clock()
                    var links = BatchLinks<String>()
                    return (try batch.map { try Self.write($0, db, now: now, links: &links) }, nil)
                }
            } catch let error as StoreError where Self.isLocalToOneCommit(error) {
                // Rolled back; written again below, each commit in its own savepoint.
            }
            return try Self.transaction(db) {
                let now = clock()
                var out: [CommitResult] = []
                var failure: StoreError?
                out.reserveCapacity(batch.count)
                var links = BatchLinks<String>()
                for c in batch {
                    try db.run(.savepoint)
                    do {
                        let r = try Self.write(c, db, now: now, links: &links)
                        if !r.isWritten { try db.run(.rollbackToSavepoint) }
                        try db.run(.release)
                        out.append(r)
                    } catch let error as StoreError where Self.isLocalToOneCommit(error) {
                        try db.run(.rollbackToSavepoint)
                        try db.run(.release)
                        out.append(.conflict)   // not written; replaced by the error below
                        links.record(c, .conflict)
                        if failure == nil {
                            failure = StoreError("batch-partly-failed",
                                                 "commit of message '\(c.inbound.id)' failed and was rolled back alone; "
                                                 + "the rest of the batch was written: \(error.message)")
                        }
                    }
                }
                return (out, failure)
            }
        }
        let committed = results.reduce(0) { $0 + ($1.isWritten ? 1 : 0) }
        if committed > 0 {
            counters.withLock { $0.commits += committed }
            changed()
        }
        if let failure { throw failure }
        return results
    }

    /// An error of one commit's own (a message too big, a constraint), not of the connection or
    /// the file: the other commits of its batch can still be written.
    private static func isLocalToOneCommit(_ error: StoreError) -> Bool {
        !error.isTransient
    }

    public func claim(bot: String, conversations: [String], worker: String, until: Date) async throws -> Set<String> {
        let clock = options.clock
        return try await perform { db in
            try Self.transaction(db) {
                let now = clock()
                let s = try db.statement(.claim)
                var held = Set<String>()
                for c in conversations {
                    s.bind(1, bot)
                    s.bind(2, c)
                    s.bind(3, worker)
                    s.bind(4, until)
                    s.bind(5, now)
                    defer { s.reset() }
                    _ = try s.step()
                    if db.changes > 0 { held.insert(c) }
                }
                return held
            }
        }
    }

    public func release(bot: String, worker: String, keeping: Set<String>) async throws {
        var w = JSONWriter(capacity: 2 + keeping.count * 16)
        w.stringArray(keeping.sorted())
        let kept = w.bytes
        try await perform { db in
            let s = try db.statement(.release_)
            defer { s.reset() }
            s.bind(1, bot)
            s.bind(2, worker)
            kept.withUnsafeBufferPointer { s.bind(3, bytes: $0) }
            _ = try s.step()
        }
    }

    @discardableResult
    public func append(_ m: NewMessage) async throws -> StoredMessage {
        let (stored, inserted) = try await perform { db -> (StoredMessage, Bool) in
            try Self.transaction(db) {
                let existing = try db.statement(.messageByID)
                defer { existing.reset() }
                existing.bind(1, m.id)
                if try existing.step() { return (Self.message(existing), false) }

                let c = try db.statement(.upsertConversationOnAppend)
                defer { c.reset() }
                c.bind(1, m.conversationID)
                c.bind(2, m.from == .customer ? m.senderID : nil)
                c.bind(3, m.channel)
                c.bind(4, m.locale)
                c.bind(5, m.at)
                _ = try c.step()

                let s = try db.statement(.insertMessage)
                defer { s.reset() }
                s.bind(1, m.id)
                s.bind(2, m.conversationID)
                s.bind(3, m.kind.rawValue)
                s.bind(4, m.from.rawValue)
                s.bind(5, m.senderID)
                s.bind(6, m.senderName)
                s.bind(7, m.text)
                s.bind(8, m.at)
                _ = try s.step()
                let stored = StoredMessage(seq: db.lastInsertRowID, id: m.id, conversationID: m.conversationID, kind: m.kind,
                                           from: m.from, senderID: m.senderID, senderName: m.senderName, text: m.text,
                                           at: Date(timeIntervalSince1970: m.at.timeIntervalSince1970))
                return (stored, true)
            }
        }
        if inserted { changed() }
        return stored
    }

    public func transcript(conversation: String) async throws -> [StoredMessage] {
        try await perform { db in
            let s = try db.statement(.transcript)
            defer { s.reset() }
            s.bind(1, conversation)
            var out: [StoredMessage] = []
            while try s.step() { out.append(Self.message(s)) }
            return out
        }
    }

    public func inbox(bot: String) async throws -> [InboxEntry] {
        try await perform { db in
            let s = try db.statement(.inbox)
            defer { s.reset() }
            s.bind(1, bot)
            var out: [InboxEntry] = []
            while try s.step() {
                out.append(InboxEntry(conversationID: s.text(0), customerName: s.optionalText(1), queue: s.optionalText(2),
                                      reason: s.optionalText(3), waitingSince: s.date(4), lastMessage: s.optionalText(5)))
            }
            return out
        }
    }

    public func lastNotificationSeq() async throws -> Int64 {
        try await perform { db in
            let s = try db.statement(.lastNotificationSeq)
            defer { s.reset() }
            return try s.step() ? s.int64(0) : 0
        }
    }

    public func notifications(after seq: Int64, limit: Int) async throws -> [StoredNotification] {
        try await perform { db in
            let s = try db.statement(.notifications)
            defer { s.reset() }
            s.bind(1, seq)
            s.bind(2, limit)
            var out: [StoredNotification] = []
            while try s.step() { out.append(Self.notification(s)) }
            return out
        }
    }

    public func conversation(_ id: String) async throws -> ConversationInfo? {
        try await perform { db in
            let s = try db.statement(.conversation)
            defer { s.reset() }
            s.bind(1, id)
            guard try s.step() else { return nil }
            return ConversationInfo(id: s.text(0), customerID: s.optionalText(1), channel: s.optionalText(2),
                                    locale: s.optionalText(3), createdAt: s.date(4))
        }
    }

    /// Closes the connection and ends its thread; later calls fail with code `closed`.
    public func close() async throws {
        let first = lifecycle.withLock { l -> Bool in
            defer { l.closed = true }
            return !l.closed
        }
        guard first else { return }
        let connection = connection
        if thread.isCurrent {
            connection.close()
        } else {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                if !thread.submit({ connection.close(); c.resume() }) { c.resume() }
            }
        }
        thread.stop()
        if let reader {
            try? await reader.thread.run(stopped: StoreError.closed(path)) { reader.connection.close() }
            reader.thread.stop()
        }
        await checkpointer?.stop()
    }

    // MARK: rows

    /// Columns of `StoreSQL.messageColumns`.
    static func message(_ s: Statement) -> StoredMessage {
        var m = messageFields(s)
        // Written by `QuickReply.write` alone; a value that does not read (edited by hand) is
        // shown as none rather than failing the whole transcript.
        if !s.isNull(10) { m.quickReplies = (try? QuickReply.read(json: s.optionalText(10))) ?? [] }
        return m
    }

    /// The first ten columns of `StoreSQL.messageColumns`, which `pending` reads too.
    static func messageFields(_ s: Statement) -> StoredMessage {
        StoredMessage(seq: s.int64(0), id: s.text(1), conversationID: s.text(2),
                      kind: StoredMessage.Kind(rawValue: s.text(3)) ?? .message,
                      from: SenderRole(rawValue: s.text(4)) ?? .system,
                      senderID: s.optionalText(5), senderName: s.optionalText(6), text: s.text(7), at: s.date(8),
                      ruleID: s.optionalText(9))
    }

    static func notification(_ s: Statement) -> StoredNotification {
        StoredNotification(
            seq: s.int64(0), bot: s.text(1),
            notification: AgentNotification(idempotencyKey: s.text(2), conversationID: s.text(3), queue: s.text(4),
                                            reason: s.text(5), text: s.text(6), customerName: s.optionalText(7),
                                            lastMessage: s.text(8), isHandoff: s.int64(9) != 0, at: s.date(10)))
    }
}

/// `waitForChanges` bookkeeping, confined to the connection's thread.
final class PollState: @unchecked Sendable {
    // @unchecked: read and written only inside `perform` bodies, which run on one thread.
    var dataVersion: Int64 = -1
}
