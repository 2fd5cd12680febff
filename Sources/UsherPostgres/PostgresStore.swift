public import Foundation
public import UsherEngine
public import UsherStore
public import UsherSQLMapping
import Synchronization

/// The PostgreSQL adapter (`postgres://…`, `postgresql://…`) over libpq.
///
/// - Intake: LISTEN/NOTIFY on a trigger over the messages table, plus a look at the newest
///   sequence number before every wait, so a notification missed while disconnected costs
///   nothing: the worker always reads from its durable cursor. With `intake: poll` (or while the
///   listening connection is down) it polls instead.
/// - The cursor never passes a hole in the sequence: a number taken by a transaction that has
///   not committed yet would otherwise be skipped for good. A hole older than `gapTimeout` is a
///   rolled-back insert and is passed.
/// - Claims: lease rows taken with `FOR UPDATE SKIP LOCKED`; commits are one transaction each,
///   a group commit one transaction per batch, with the conversations' states locked in a
///   fixed order.
/// - Connection loss and server restarts: transient errors the worker retries with backoff; the
///   next call connects again. Passwords stay in the URL or the environment; the CLI masks
///   them wherever it prints a URL.
public final class PostgresStore: SharedStore, SignallingStore, TunableStore, NotificationStore, BackendStore {
    public struct Options: Sendable {
        /// How long a hole in the sequence holds the cursor back before it counts as a rollback.
        public var gapTimeout: Duration = .seconds(30)
        /// Connections for commits: a worker writes its next batch while the last one is still
        /// on its way (`Worker.Options.writesInFlight`). Each connects on first use (or at `warmUp`).
        public var commitSessions = 2
        /// Whether a claim may take a message from its NOTIFY instead of reading it (`claimPending`).
        /// A worker's claims go through one store: its notes and the states it knows are its own.
        public var takeNotified = true
        /// The most notified messages kept for claims (`PGListener.maxNotes`).
        var maxNotes = 10_000
        /// How often the LISTEN connection checks that it hears the channel: when the last two
        /// NOTIFYs it sent itself have not come back, it counts as deaf, and the store polls
        /// until one does (`PGListener`).
        public var listenProbeInterval: Duration = .seconds(15)
        /// Through a mapping (an application's tables, with their history): where a bot with no
        /// cursor yet starts (`usher run --from`); nil: `.now`, the newest message when the store
        /// opened. Usher's own schema ignores it: everything there was written for Usher.
        public var start: StartPosition?
        /// Where the store's warnings go (a `--from` that a bot's cursor makes moot): an event and
        /// its fields. Nil: dropped.
        public var warn: (@Sendable (String, [(String, String)]) -> Void)?
        public init() {}
    }

    let layout: PGLayout
    package let sql: PGSQL
    let options: Options
    private let session: PGSession
    /// A second connection for the worker's reads (intake, states, the newest seq), so that the
    /// next batch is read while the last one is written.
    private let reader: PGSession
    /// Where commits go (`Options.commitSessions`).
    private let writers: PGSessionPool
    private let listener: PGListener?
    /// Holes in the sequence the cursor has met (by the seq below each): when first seen, and
    /// the transaction-id horizon at a later look (`Gap.horizon`).
    private let gaps = Mutex<[String: [Int64: Gap]]>([:])   // by bot, then seq

    private struct Gap {
        var first: ContinuousClock.Instant
        /// `pg_snapshot_xmax` at a look at least `settle` after the first: the transaction that
        /// took the number has had its id by then, below this (it gets one at its first write,
        /// microseconds after taking the number unless a BEFORE trigger is slow in between; the
        /// native append and the worker's commits have theirs before). Once every transaction
        /// below it has ended (the snapshot's xmin reached it) and the hole is still there, that
        /// transaction rolled back: the number never fills. Until then reads stop below the
        /// hole, so this is kept short.
        var horizon: Int64?
        static let settle: Duration = .milliseconds(250)
    }
    /// What `claimPending` needs to take notified messages without reading them (`takeNotified`).
    private let known = Mutex(Known())

    private struct Known {
        /// The bot whose claims this store serves; "" once a second one claimed (then every
        /// claim reads: the notes are shared, each bot's done marks are not).
        var bot: String?
        /// The listener's generation when the last read began.
        var readGeneration: UInt64 = 0
        /// How far the last read covered: a claim that starts below it (a rescan from the
        /// cursor, a read again after a commit that could not go through) reads, so that what the
        /// reads passed over is looked at again.
        var readThrough: Int64 = 0
        /// Whether the last read started above what the listener found at its start (the
        /// backlog): only then are states kept. A worker working through a backlog reads
        /// anyway, and keeping 512 states a batch cost it CPU for nothing.
        var live = false
        /// Each conversation's state as this store's last commit in it left it, with the seq of
        /// the message that commit decided: a note at or below it is not new. Forgotten when a
        /// commit in the conversation does not go through, and when a read returns its messages.
        /// At most `maxStates`.
        var states: [String: (state: ConversationState, through: Int64)] = [:]
        static let maxStates = 100_000

        /// Whether one bot claimed through this store, and only one.
        var servesOneBot: Bool { bot.map { !$0.isEmpty } ?? false }

        mutating func serve(_ bot: String) -> Bool {
            if self.bot == nil { self.bot = bot }
            if self.bot != bot { self.bot = "" }
            return self.bot == bot
        }

        mutating func learn(_ conversation: String, _ state: (ConversationState, Int64)?) {
            if states.count >= Self.maxStates { states.removeAll() }
            states[conversation] = state
        }
    }
    /// The newest seq when the store opened (a mapping's `StartPosition.now`).
    private let openedAt: Int64
    /// Each bot's cursor as this store first found or set it (`floor(_:)`): reads never start below.
    private let floors = Mutex<[String: Int64]>([:])
    private let quarantined = Atomic<Int>(0)
    private let takenNotified = Atomic<Int>(0)
    private let oneRoundTrip = Atomic<Int>(0), twoRoundTrips = Atomic<Int>(0)

    /// Connects, checks the mapping against the database (`MappingMismatch` names what is
    /// missing, at its line in the mapping file), migrates Usher's tables (and, for the native
    /// schema, conversations and messages) and starts listening.
    public init(url given: String, mapping: SQLMapping = .native, options: Options = Options()) async throws {
        // libpq takes the URL as it is (sslmode, host, … as parameters; PGPASSWORD, PGSSLMODE
        // and ~/.pgpass from the environment), with a connect timeout and TCP keepalives where
        // it sets none (`PGConnInfo`).
        let url = PGConnInfo.withDefaults(given)
        let session = Self.session(url, label: "usher.postgres")
        let (layout, openedAt) = try await session.run { db in
            var layout = try PGLayout.resolve(mapping, db)
            try PGMigrator.migrate(db, layout)
            if layout.isNative, layout.mQuickReplies != nil, !(try PGMigrator.hasQuickReplies(db, layout)) { layout.mQuickReplies = nil }
            return (layout, layout.isNative ? 0 : try db.execute(PGSQL(layout).latestSeq).int64(0, 0))
        }
        self.openedAt = openedAt
        self.session = session
        let sql = PGSQL(layout)
        // The reader writes only leases, which save work but guard nothing (a commit checks
        // the state's version and the message's done mark itself): a lease lost in a server
        // crash is not worth a WAL flush on every read.
        self.reader = Self.session(url, label: "usher.postgres.reader", settings: "SET synchronous_commit = off",
                                   prepare: [sql.claimPending, sql.latestSeq, sql.states])
        // The commit sessions and the notifications are served on the reading thread too
        // (`PGSessionPool`, `PGListener`).
        let thread = reader.executor!
        let commit = PGCommit.statements(sql)
        self.writers = PGSessionPool(count: options.commitSessions, on: thread) {
            Self.session(url, label: "usher.postgres.commit\($0)", thread: false, prepare: commit)
        }
        self.layout = layout
        self.sql = sql
        self.options = options
        let channel = PGSchema.channel(layout)
        listener = layout.trigger
            ? PGListener(url, channel: channel, latestSeq: sql.latestSeq, maxNotes: options.maxNotes, on: thread,
                         probe: { payload in
                             session.submit { db in _ = try db.execute("SELECT pg_notify($1, $2)", [channel, payload], prepare: true) }
                         }, probeInterval: options.listenProbeInterval) : nil
    }


    /// A session whose statements are planned once: they read and write a few rows through
    /// indexes whatever the parameters, and planning `claimPending` again on every call took
    /// longer than running it. Without JIT: a generic plan's cost is an estimate for any
    /// parameters, and past `jit_above_cost` (a messages table of some 400,000 rows here) every
    /// run of `claimPending` compiled its expressions first — 50 ms of a 60 ms read.
    /// `prepare`: statements prepared as soon as the session connects (`warmUp`).
    private static func session(_ url: String, label: String, thread: Bool = true, settings: String? = nil,
                                prepare: [String] = []) -> PGSession {
        PGSession(url, label: label, thread: thread) { db throws(StoreError) in
            try db.script("SET plan_cache_mode = force_generic_plan; SET jit = off" + (settings.map { "; " + $0 } ?? ""))
            try db.prepare(all: prepare)   // one round trip
        }
    }

    /// Connects the reading and commit sessions, each preparing its statements, and runs every
    /// commit statement once on empty arrays (every parameter of them is an array): at a
    /// worker's start the first messages otherwise waited 15–30 ms while the first commit
    /// planned its statements and loaded the tables' catalog entries into a new backend.
    public func warmUp() async throws {
        let commit = PGCommit.statements(sql)
        try await reader.run { _ in }
        try await writers.each { db in
            for sql in commit { try db.execute(sql, Array(repeating: "{}", count: Self.parameterCount(sql)), prepare: true) }
        }
    }

    /// The highest `$n` in `sql`.
    static func parameterCount(_ sql: String) -> Int {
        var highest = 0
        _ = PGSQL.replacingParameters(in: sql) { n in highest = max(highest, n); return "" }
        return highest
    }

    /// The channel the store's trigger NOTIFYs on (nil: the mapping's intake polls).
    package var notifyChannel: String? { layout.trigger ? PGSchema.channel(layout) : nil }

    /// Messages marked done without being decided because the database refused what deciding
    /// them would write (see `usher.quarantined`).
    public var quarantinedCount: Int { quarantined.load(ordering: .relaxed) }

    /// Messages taken from their NOTIFY without a read (`takeNotified`).
    public var takenFromNotifications: Int { takenNotified.load(ordering: .relaxed) }

    /// Group commits written in one round trip (the batch was as its worker read it), and those
    /// checked first (`PGCommit`).
    public var commitRoundTrips: (one: Int, two: Int) { (oneRoundTrip.load(ordering: .relaxed), twoRoundTrips.load(ordering: .relaxed)) }

    // MARK: intake

    public func pending(bot: String, after position: Int64, limit: Int) async throws -> [StoredMessage] {
        let cursor = max(position, try await floor(bot))
        let q = sql.pending
        return try await reader.run { db in
            let r = try db.execute(q, [String(cursor), bot, String(limit)], prepare: true)
            return (0..<r.rows).map { Self.message(r, $0) }
        }
    }

    /// One statement (`PGSQL.claimPending`); the database's leases decide what this worker
    /// holds, so a read does not ask `holds`: a lease is renewed once less than half of it is left.
    ///
    /// A message a NOTIFY brought whole, of a conversation the worker holds (`holds`) and whose
    /// state this store knows, is taken from the notification instead (`takeNotified`): no round
    /// trip.
    public func claimPending(bot: String, after cursor: Int64, limit: Int, worker: String, until: Date,
                             skipping: [String: Int64], share: Share, holds: @Sendable (String) -> Bool) async throws -> Intake {
        let cursor = max(cursor, try await floor(bot))
        if let intake = takeNotified(bot: bot, after: cursor, limit: limit, skipping: skipping, share: share, holds: holds) { return intake }
        let generation = listener?.generation ?? 0
        let q = sql.claimPending
        let inFlight = skipping.sorted { $0.key < $1.key }
        let skip = PGText.array(inFlight.map(\.key)), skipThrough = PGText.array(inFlight.map(\.value))
        let ownership = layout.readsOwnership
        let (messages, texts, owners, through, passed) = try await reader.run { db in
            let r = try db.execute(q, [String(cursor), bot, String(limit), worker, String(until.timeIntervalSince1970),
                                       String(max(0, until.timeIntervalSinceNow / 2)), skip, String(share.count), String(share.index), skipThrough],
                                   prepare: true)
            var texts: [String: String] = [:]
            var owners: [String: String] = [:]
            let messages = (0..<r.rows).map { i in
                let m = Self.message(r, i)
                if let state = r.text(i, 14) { texts[m.conversationID] = state }
                if ownership { owners[m.conversationID] = r.text(i, 17) }
                return m
            }
            return (messages, texts, owners, r.rows > 0 ? r.int64(0, 15) : cursor, r.rows > 0 && !r.isNull(0, 16) ? r.int64(0, 16) : nil)
        }
        var states = try texts.mapValues(Self.decodeState)
        if ownership {
            // Each conversation once, from its first message of the batch.
            var seen = Set<String>()
            for m in messages where seen.insert(m.conversationID).inserted {
                let c = m.conversationID
                states[c] = Self.presented(states[c], c, row: Owner(rawValue: owners[c] ?? "") ?? .bot, channel: m.channel,
                                           locale: m.locale, at: m.at)
            }
        }
        // No rows: nothing is known to be covered (what was passed over was not counted).
        let readThrough = max(cursor, through)
        let served = known.withLock { k in
            guard k.serve(bot) else { return false }
            k.readGeneration = generation
            k.readThrough = readThrough
            k.live = listener.map { $0.isListening && cursor >= $0.completeSeq } ?? false
            for m in messages { k.learn(m.conversationID, nil) }
            return true
        }
        if served { listener?.forget(messages.lazy.map(\.seq), through: readThrough) }
        return Intake(messages: messages, readThrough: readThrough, states: states, passedOver: passed)
    }

    /// The messages NOTIFYs brought since the last read (`PGListener.notes`) of conversations
    /// the worker holds (`holds`: for at least half a lease more), not in flight, whose state this
    /// store's last commit in them left (`Known.states`) — and, for a worker alone in its share,
    /// new conversations' first messages, decided from no state: taken as a read would return
    /// them, without one. Nil (read) when there are none, when a notification since the last
    /// read did not bring its message, when reads start below what the listener saw notified
    /// (`Notified.complete`), or below what the last read covered (the worker looks again at
    /// what its reads passed over).
    ///
    /// Safe whatever the notes say about states and order: the commit checks the state's
    /// version, the done marks and the order (`PGCommit`), and a conflict sends the worker back
    /// to reading. The content is the row as inserted; one updated since is notified again by
    /// its seq alone, and read (`PGSchema.trigger`). `readThrough`
    /// stays at `after`: a message committed out of seq order may still be notified below the
    /// ones taken, so the next read starts where this one did (and skips what is in flight).
    private func takeNotified(bot: String, after: Int64, limit: Int, skipping: [String: Int64], share: Share,
                              holds: (String) -> Bool) -> Intake? {
        guard options.takeNotified, let listener, listener.isListening,
              let generation = known.withLock({ $0.bot == bot && after >= $0.readThrough ? $0.readGeneration : nil }),
              let notified = listener.notified(since: generation), after >= notified.complete else { return nil }
        let notes = listener.notes(after: after)
        if notes.isEmpty { return nil }
        var messages: [StoredMessage] = []
        var unfit = Set<String>()
        // New conversations (each note's first message of its conversation), for a worker alone.
        var new = Set<String>()
        for note in notes {
            guard let m = note.message else { return nil }
            messages.append(m)
            let c = m.conversationID
            if skipping[c] != nil { unfit.insert(c) } else if note.first && share.count == 1 { new.insert(c) } else if !holds(c) { unfit.insert(c) }
        }
        // Each conversation's state as this store's commit left it; a note at or below the
        // message that commit decided is not a new message. A new conversation has none.
        let states = known.withLock { k in
            var out: [String: ConversationState] = [:]
            for m in messages where !unfit.contains(m.conversationID) {
                if let s = k.states[m.conversationID] {
                    if m.seq > s.through { out[m.conversationID] = s.state } else { unfit.insert(m.conversationID) }
                } else if !new.contains(m.conversationID) {
                    unfit.insert(m.conversationID)
                }
            }
            return out
        }
        messages.removeAll { unfit.contains($0.conversationID) }
        guard !messages.isEmpty, messages.count <= limit else { return nil }
        // As a read would decode them: the worker decides from exactly what it would have read.
        var decoded: [String: ConversationState] = [:]
        for (c, state) in states {
            guard let d = try? Self.decodeState(Self.encodeState(state)) else { return nil }
            decoded[c] = d
        }
        listener.forget(messages.lazy.map(\.seq))
        takenNotified.add(messages.count, ordering: .relaxed)
        var intake = Intake(messages: messages, readThrough: after, states: decoded, passedOver: nil)
        intake.instant = true
        return intake
    }

    public func latestSeq() async throws -> Int64 {
        let q = sql.latestSeq
        return try await reader.run { db in try db.execute(q, prepare: true).int64(0, 0) }
    }

    public func waitForChanges(after seq: Int64, timeout: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let generation = listener?.generation ?? 0
            do {
                if try await latestSeq() > seq { return }
            } catch let error as StoreError where error.isTransient {
                // The database is away: wait a little and let the caller's next (retried) call
                // find out when it is back.
                try? await Task.sleep(for: min(max(.zero, deadline - clock.now), layout.pollInterval))
                return
            }
            let now = clock.now
            if now >= deadline || Task.isCancelled { return }
            if let listener, listener.isListening {
                // Woken by a NOTIFY; the timeout bounds what a notification lost in flight costs.
                await listener.signal.wait(since: generation, timeout: min(deadline - now, .seconds(1)))
                // A NOTIFY means an inbound message committed: no need to look at the newest seq first.
                if listener.generation != generation { return }
            } else {
                try? await Task.sleep(for: min(deadline - now, layout.pollInterval))
            }
        }
    }

    /// Notified at each NOTIFY received, while the LISTEN connection is up (else `nil`: the
    /// store polls).
    public var changeSignal: ChangeSignal? {
        guard let listener, listener.isListening else { return nil }
        return listener.signal
    }

    /// What the NOTIFYs named, while the LISTEN connection is up.
    ///
    /// For a store serving one bot, `newest` is the newest seq notified that no read returned or
    /// passed and no claim took from its notification (`takeNotified`): once the claims took every
    /// message notified, reading again would find nothing.
    public func notified(since generation: UInt64) -> Notified? {
        guard let listener, listener.isListening, var notified = listener.notified(since: generation) else { return nil }
        if known.withLock(\.servesOneBot) { notified.newest = listener.newestNote ?? 0 }
        return notified
    }

    /// The worker reads, decides and writes on the reading connection's thread, which also
    /// serves the commit connections and the notifications: a store call then runs where it is
    /// made, and a commit waiting for the server lets the next read go on meanwhile.
    public var workerExecutor: (any TaskExecutor)? { reader.executor }

    public func cursor(bot: String) async throws -> Int64 {
        _ = try await floor(bot)
        let q = sql.cursor
        return try await session.run { db in
            let r = try db.execute(q, [bot], prepare: true)
            return r.rows > 0 ? r.int64(0, 0) : 0
        }
    }

    /// Moves the cursor just below the oldest inbound message not done (else to the newest
    /// message), but never past a hole a transaction may still fill: one whose transaction may
    /// still run (see `Gap`), and younger than `gapTimeout`.
    public func advanceCursor(bot: String) async throws {
        _ = try await floor(bot)
        let q = sql.cursorTarget
        let group = Share.group(of: bot)
        let (current, candidate, holes, xmin, xmax) = try await session.run { db -> (Int64, Int64, [Int64], Int64, Int64) in
            let r = try db.execute(q, [bot, group], prepare: true)
            let holes = r.string(0, 2).dropFirst().dropLast().split(separator: ",").compactMap { Int64($0) }
            return (r.int64(0, 0), r.int64(0, 1), holes, r.int64(0, 3), r.int64(0, 4))
        }
        guard candidate > current else { return }
        let now = ContinuousClock.now
        let timeout = options.gapTimeout
        let target = gaps.withLock { all -> Int64 in
            var seen = all[bot] ?? [:]
            defer { all[bot] = seen.filter { $0.key >= current } }
            var target = candidate
            for hole in holes {
                var gap = seen[hole] ?? Gap(first: now)
                let rolledBack = gap.horizon.map { xmin >= $0 } ?? false
                if gap.horizon == nil, now - gap.first >= Gap.settle { gap.horizon = xmax }
                seen[hole] = gap
                if !rolledBack && now - gap.first < timeout { return hole }
            }
            // The query lists at most 100 holes: past the last one listed there may be more.
            if holes.count >= 100, let last = holes.last { target = min(target, last) }
            return target
        }
        guard target > current else { return }
        let set = sql.setCursor
        try await session.run { db in _ = try db.execute(set, [bot, String(target)], prepare: true) }
    }

    /// Where `bot`'s reads start at the lowest. Usher's own schema: 0. Through a mapping the
    /// tables hold the application's history: the first time a bot is seen it gets a cursor at
    /// its start position (`Options.start`; `.now`: the newest seq when the store opened), kept
    /// in `usher.cursors` so that every later start goes on from there; the messages at or
    /// below it count as done. A bot that has one keeps it: a `--from` given then is reported
    /// and has no effect.
    func floor(_ bot: String) async throws -> Int64 {
        if layout.isNative { return 0 }
        if let f = floors.withLock({ $0[bot] }) { return f }
        let start = options.start ?? .now
        let params: [String?] = switch start {
        case .now: [bot, String(openedAt), nil]
        case .beginning: [bot, "0", nil]
        case let .time(date): [bot, nil, String(date.timeIntervalSince1970)]
        }
        let (insert, read) = (sql.startCursor, sql.cursor)
        let (seq, set) = try await session.run { db in
            let r = try db.pipeline([(insert, params), (read, [bot])])
            return (r[1].int64(0, 0), r[0].rows > 0)
        }
        if !set, let given = options.start {
            options.warn?("start-ignored", [("bot", bot), ("from", given.description), ("cursor", String(seq)),
                                            ("note", "the bot has a position in this store already and goes on from it")])
        }
        floors.withLock { $0[bot] = seq }
        return seq
    }

    /// Keeps the worker's row of `Share.group(of: bot)` (`members`) up to date with its share
    /// and `safe`, for `advanceCursor`.
    public func progress(bot: String, worker: String, share: Share, safe: Int64?) async throws {
        let q = sql.progress
        let group = Share.group(of: bot)
        try await session.run { db in
            _ = try db.execute(q, [group, worker, String(share.count), String(share.index), safe.map { String($0) }], prepare: true)
        }
    }

    // MARK: state

    public func state(bot: String, conversation: String) async throws -> ConversationState? {
        if layout.readsOwnership { return try await states(bot: bot, conversations: [conversation])[conversation] }
        let q = sql.state
        let text = try await session.run { db in
            let r = try db.execute(q, [bot, PGText.clean(conversation)], prepare: true)
            return r.rows > 0 ? r.text(0, 0) : nil
        }
        return try text.map(Self.decodeState)
    }

    public func states(bot: String, conversations: [String]) async throws -> [String: ConversationState] {
        let q = sql.states
        let ownership = layout.readsOwnership
        let rows = try await reader.run { db in
            let r = try db.execute(q, [bot, PGText.array(conversations)], prepare: true)
            return (0..<r.rows).map { (r.string($0, 0), r.text($0, 1), ownership ? r.text($0, 2) : nil) }
        }
        var out: [String: ConversationState] = [:]
        for (c, text, owner) in rows {
            let stored = try text.map(Self.decodeState)
            out[c] = ownership ? Self.presented(stored, c, row: Owner(rawValue: owner ?? "") ?? .bot, channel: nil, locale: nil, at: Date()) : stored
        }
        return out
    }

    /// The state the engine decides from when the application's columns say who owns the
    /// conversation (`row`, `PGLayout.owner`), from the one Usher stored: the bot answers only
    /// a conversation the application gives it.
    ///
    /// - A person holds it: `agent`, whatever Usher's state says — Usher never answers there.
    /// - It waits for a person: `waiting` when Usher handed it off (its `while_waiting` rules
    ///   may speak), else `agent` (someone else queued it).
    /// - The bot's: as stored; but one Usher had handed off, or seen an agent take, was given
    ///   back (resolved and reopened, say): its session ends as at a close event, and the next
    ///   message starts a new one with the bot.
    ///
    /// The version stays the stored one (the commit compares it). A conversation Usher has no
    /// state for yet and a person has gets a new state owned by `agent`, its session begun at
    /// `at` (a state with no session would start one with the bot); one of the bot's gets none.
    /// Whatever the engine then decides, the commit writes no reply where a person has the
    /// conversation (`PGSQL.ownersChanged`).
    static func presented(_ stored: ConversationState?, _ conversation: String, row: Owner, channel: String?,
                          locale: String?, at: Date) -> ConversationState? {
        guard var state = stored else {
            if row == .bot { return nil }
            var new = ConversationState(conversationID: conversation, channel: channel, locale: locale)
            new.owner = .agent
            new.session = 1
            new.sessionStartedAt = at
            return new
        }
        switch row {
        case .agent:
            state.owner = .agent
        case .waiting:
            if state.owner != .waiting { state.owner = .agent }
        case .bot where state.owner != .bot:
            let version = state.version
            state = Engine.closeSession(state)
            state.version = version
        case .bot:
            break
        }
        return state
    }

    /// States as the SQLite store writes them (`StateJSON`: Codable's shape, written by hand).
    static func decodeState(_ text: String) throws -> ConversationState { try StateJSON.decode(text) }

    static func encodeState(_ s: ConversationState) -> String { StateJSON.encode(s) }

    // MARK: commit

    public func commit(_ commit: Commit) async throws -> CommitResult {
        try await self.commit(batch: [commit])[0]
    }

    public func commit(batch: [Commit]) async throws -> [CommitResult] {
        if batch.isEmpty { return [] }
        do {
            return try await commitOnce(batch)
        } catch {
            learn(batch, nil)
            throw error
        }
    }

    /// Keeps each committed conversation's new state for `takeNotified`, and forgets those of
    /// the rest (`results` nil: all of them), whose state is not known any more. While the
    /// reads are in a backlog (`Known.live`) it keeps none, only forgets.
    private func learn(_ batch: [Commit], _ results: [CommitResult]?) {
        known.withLock { k in
            guard k.servesOneBot, let bot = k.bot, k.live || !k.states.isEmpty else { return }
            for (i, c) in batch.enumerated() where c.bot == bot {
                k.learn(c.inbound.conversationID, k.live && results?[i].isWritten == true ? (c.state, c.inbound.seq) : nil)
            }
        }
    }

    private func commitOnce(_ batch: [Commit]) async throws -> [CommitResult] {
        let sql = sql
        var attempt = 0
        while true {
            attempt += 1
            do {
                // After a race, check first: a done mark among the batch's messages would fail
                // the one round trip again.
                let checkFirst = attempt > 1
                let (results, once) = try await writers.run { db, thread in
                    try await PGCommit(sql: sql, batch: batch).write(db, on: thread, checkFirst: checkFirst)
                }
                if once { oneRoundTrip.add(1, ordering: .relaxed) } else { twoRoundTrips.add(1, ordering: .relaxed) }
                learn(batch, results)
                return results
            } catch let error as StoreError where PGCommit.lostRace(error) && attempt < 10 {
                // Another worker created a state or done mark of this batch first, or its
                // commit and this one waited for each other: look again.
                continue
            } catch let error as StoreError where PGError.isDataException(error) {
                // The database refuses something a commit writes (a value too long for a
                // helpdesk's column, say). Find which, and mark that message done with the
                // reason instead of retrying it forever.
                if batch.count > 1 {
                    // One by one, linked as in the batch (`BatchLinks`): a commit decided from
                    // one found done or quarantined (its state not written) is not written.
                    var out: [CommitResult] = []
                    var links = BatchLinks<String>()
                    for c in batch { out.append(try await links.result(of: c) { try await self.commit(batch: [c])[0] }) }
                    return out
                }
                let reason = "\(error.code): \(error.message)"
                let result = try await writers.run { db, _ in try PGCommit(sql: sql, batch: batch).quarantine(db, reason: reason) }
                if result.isWritten { quarantined.add(1, ordering: .relaxed) }
                return [result.isWritten ? .duplicate : result]
            }
        }
    }

    // MARK: leases

    public func claim(bot: String, conversations: [String], worker: String, until: Date) async throws -> Set<String> {
        if conversations.isEmpty { return [] }
        let q = sql.claim
        let list = PGText.array(conversations.sorted())
        return try await session.run { db in
            let r = try db.execute(q, [bot, list, worker, String(until.timeIntervalSince1970)], prepare: true)
            return Set((0..<r.rows).map { r.string($0, 0) })
        }
    }

    public func release(bot: String, worker: String, keeping: Set<String>) async throws {
        let q = sql.release
        let kept = PGText.array(keeping.sorted())
        try await session.run { db in _ = try db.execute(q, [bot, worker, kept], prepare: true) }
    }

    /// Shares are taken in SQL (`PGSQL.shareSlot`, PostgreSQL's `hashtext`), not by
    /// `Share.contains`.
    public func members(group: String, worker: String, until: Date) async throws -> [String] {
        let q = sql.members
        return try await session.run { db in
            // How long from now, on the server's clock: a worker whose clock is behind is not
            // taken for gone.
            let r = try db.execute(q, [group, worker, String(until.timeIntervalSinceNow)], prepare: true)
            return (0..<r.rows).map { r.string($0, 0) }
        }
    }

    // MARK: backend side

    @discardableResult
    public func append(_ m: NewMessage) async throws -> StoredMessage {
        let sql = sql
        let l = layout
        let sender: String = switch m.from {
        case .customer: l.customerValues[0]
        case .agent: l.agentValues[0]
        case .bot: l.botValue
        case .system: l.systemValue
        }
        let at = String(m.at.timeIntervalSince1970)
        let id = PGText.clean(m.id)
        let conversation = PGText.clean(m.conversationID)
        let customer: String? = m.from == .customer ? PGText.clean(m.senderID) : nil
        let upsert: (String, [String?]) = (sql.upsertConversation, [
            conversation, customer, PGText.clean(m.channel), PGText.clean(m.locale), at,
        ])
        let text: String = PGText.clean(m.text)
        let insert: (String, [String?]) = (sql.insertMessage, [
            id, conversation, m.kind == .close ? l.kindClose : l.kindMessage, sender,
            PGText.clean(m.senderID), PGText.clean(m.senderName), text, at,
        ])
        @Sendable func stored(_ r: PGResult) throws -> StoredMessage {
            guard r.rows > 0 else { throw StoreError("pg-append", "message \(id) was not stored") }
            return Self.transcriptMessage(r, 0)
        }
        guard l.mID == nil else {
            // The message is found by the id it was given, stored now or before: one round trip.
            return try await session.run { db in
                do {
                    let r = try db.pipeline([("BEGIN", []), upsert, insert, (sql.messageByID, [id]), ("COMMIT", [])])
                    return try stored(r[3])
                } catch {
                    // A failed statement skips the rest, COMMIT too: end the transaction.
                    if db.isOK { try? db.script("ROLLBACK") }
                    throw error
                }
            }
        }
        // The database numbers messages and the number is the id: it comes back from the insert.
        return try await session.run { db in
            try PGSession.transaction(db) {
                try db.execute(upsert.0, upsert.1, prepare: true)
                let r = try db.execute(insert.0, insert.1, prepare: true)
                return try stored(try db.execute(sql.messageByID, [r.rows > 0 ? r.string(0, 1) : id], prepare: true))
            }
        }
    }

    public func transcript(conversation: String) async throws -> [StoredMessage] {
        let q = sql.transcript
        return try await session.run { db in
            let r = try db.execute(q, [PGText.clean(conversation)], prepare: true)
            return (0..<r.rows).map { Self.transcriptMessage(r, $0) }
        }
    }

    public func inbox(bot: String) async throws -> [InboxEntry] {
        let q = sql.inbox
        return try await session.run { db in
            let r = try db.execute(q, [bot], prepare: true)
            return (0..<r.rows).map { i in
                InboxEntry(conversationID: r.string(i, 0), customerName: r.text(i, 1), queue: r.text(i, 2),
                           reason: r.text(i, 3), waitingSince: Date(timeIntervalSince1970: r.double(i, 4)),
                           lastMessage: r.text(i, 5))
            }
        }
    }

    public func lastNotificationSeq() async throws -> Int64 {
        let q = sql.lastNotificationSeq
        return try await session.run { db in try db.execute(q, prepare: true).int64(0, 0) }
    }

    public func notifications(after seq: Int64, limit: Int) async throws -> [StoredNotification] {
        let q = sql.notifications
        return try await session.run { db in
            let r = try db.execute(q, [String(seq), String(limit)], prepare: true)
            return (0..<r.rows).map { i in
                StoredNotification(seq: r.int64(i, 0), bot: r.string(i, 1), notification: AgentNotification(
                    idempotencyKey: r.string(i, 2), conversationID: r.string(i, 3), queue: r.string(i, 4),
                    reason: r.string(i, 5), text: r.string(i, 6), customerName: r.text(i, 7),
                    lastMessage: r.string(i, 8), isHandoff: r.bool(i, 9), at: Date(timeIntervalSince1970: r.double(i, 10))))
            }
        }
    }

    public func conversation(_ id: String) async throws -> ConversationInfo? {
        let q = sql.conversation
        return try await session.run { db in
            let r = try db.execute(q, [PGText.clean(id)], prepare: true)
            guard r.rows > 0 else { return nil }
            return ConversationInfo(id: r.string(0, 0), customerID: r.text(0, 1), channel: r.text(0, 2),
                                    locale: r.text(0, 3), createdAt: Date(timeIntervalSince1970: r.double(0, 4)))
        }
    }

    /// A store dropped without `close()` lets go of its threads and connections all the same:
    /// the listener's thread, waiting for the reading thread to hand its connection back, would
    /// otherwise wait for ever — and the reading thread, watching that connection, with it.
    deinit { listener?.stop() }

    public func close() async throws {
        listener?.stop()
        await session.close()
        await writers.close()
        await reader.close()
        await listener?.waitUntilEnded()
    }

    /// A row of `PGLayout.messageColumns`.
    static func message(_ r: PGResult, _ i: Int) -> StoredMessage {
        message(seq: r.int64(i, 0), at: r.double(i, 8)) { r.text(i, $0) }
    }

    /// A row of `PGLayout.transcriptColumns`: the message and its quick replies.
    static func transcriptMessage(_ r: PGResult, _ i: Int) -> StoredMessage {
        var m = message(r, i)
        // Written by `QuickReply.write` (jsonb reads back as the same JSON, spaced); a value
        // that does not read (written by hand) is shown as none rather than failing the read.
        if let json = r.text(i, 12) { m.quickReplies = (try? QuickReply.read(json: json)) ?? [] }
        return m
    }

    /// A message from the values of `PGLayout.messageColumns`, however they were read (a row, a
    /// NOTIFY's payload): `text(n)` is column n's text (nil: NULL).
    static func message(seq: Int64, at: Double, _ text: (Int) -> String?) -> StoredMessage {
        StoredMessage(seq: seq, id: text(1) ?? "", conversationID: text(2) ?? "",
                      kind: StoredMessage.Kind(rawValue: text(3) ?? "") ?? .message,
                      from: SenderRole(rawValue: text(4) ?? "") ?? .bot, senderID: text(5), senderName: text(6),
                      text: text(7) ?? "", at: Date(timeIntervalSince1970: at), ruleID: text(9),
                      channel: text(10), locale: text(11))
    }
}
