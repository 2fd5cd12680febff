public import Foundation
public import UsherEngine

/// The store contract (DESIGN.md §7): every adapter implements it and passes `ConformanceSuite`.
///
/// - Intake: inbound messages after a durable cursor, in store order (so in per-conversation
///   order); at-least-once.
/// - State: per conversation and bot, with compare-and-set on `ConversationState.version`.
/// - Commit: one atomic, idempotent write per inbound message.
/// - Concurrency: one conversation is decided by one worker at a time (`claim`), different
///   conversations in parallel, within a process and across processes. Even without a claim,
///   `commit` keeps per-conversation order (`.outOfOrder`) and exactly-once effects
///   (`.duplicate`, `.conflict`), so a lost lease costs work, never correctness.
public protocol ChatStore: Sendable {
    /// Inbound customer and agent messages and close events with `seq > cursor` that `bot` has
    /// not done yet, in `seq` order, at most `limit`.
    func pending(bot: String, after cursor: Int64, limit: Int) async throws -> [StoredMessage]

    /// Returns when messages after `seq` may have arrived, or after `timeout`.
    func waitForChanges(after seq: Int64, timeout: Duration) async throws

    /// Notified each time this store learns that something was written (a NOTIFY of a new
    /// inbound message, a commit on the same file by this process), or `nil` for a store
    /// without such a signal. Its generation, taken before a read, lets the worker wait for a new
    /// message without a query (`ChangeSignal.wait(since:timeout:)`) while its batches are written.
    var changeSignal: ChangeSignal? { get }

    /// What the change signals say of the messages (PostgreSQL's NOTIFY carries each message's
    /// `seq`), or nil when a signal since `generation` (of `changeSignal`) did not say which
    /// messages it was for — or the store's signals never do. When a read that began at `generation` covered
    /// (`Intake.readThrough`) both `complete` and `newest`, reading again would find nothing, and
    /// the worker does not.
    func notified(since generation: UInt64) -> Notified?

    /// Readies what the worker's reads and commits need — connections, prepared statements —
    /// so that the first message after a start does not wait for them. The worker calls it once
    /// as it starts; a failure is not an error (the calls connect again when they need to).
    func warmUp() async throws

    /// Where the worker runs its loops and writes: for a store whose calls run on a thread of
    /// its own (PostgreSQL's reading thread, `ThreadExecutor`), that thread, so that a call runs
    /// where it is made instead of waking the store's thread and then the caller's. nil: the
    /// global executor.
    var workerExecutor: (any TaskExecutor)? { get }

    /// The bot's durable cursor: every inbound message at or below it is done.
    func cursor(bot: String) async throws -> Int64

    /// Moves the cursor to just below the oldest inbound message `bot` has not done.
    func advanceCursor(bot: String) async throws

    /// Where `worker`'s reads of `bot` stand, for `advanceCursor`: every inbound message of
    /// `share` at or below `safe` is done (its batches read or written and what its reads
    /// passed over are all above it); nil: not known (until its reads after a share change, or
    /// after a commit that had to wait, have gone on from the cursor). Done is for good, so a
    /// word stays true however old. A store whose `advanceCursor` walks the messages from the
    /// cursor may start the walk at the lowest `safe` of the live workers of
    /// `Share.group(of: bot)`, once their shares split the conversations between them.
    /// Default: ignored.
    func progress(bot: String, worker: String, share: Share, safe: Int64?) async throws

    /// The conversation's state for `bot`, or `nil` before its first message.
    func state(bot: String, conversation: String) async throws -> ConversationState?

    /// Writes one inbound message's effects atomically (see `CommitResult`). When an agent's
    /// message newer than the inbound one is already in the conversation, the outgoing messages
    /// are dropped (the state and the done mark are still written): a reply never lands after a
    /// human has taken over.
    func commit(_ commit: Commit) async throws -> CommitResult

    /// Leases conversations to `worker` until `until`; returns those it now holds (free, expired
    /// or already its own).
    func claim(bot: String, conversations: [String], worker: String, until: Date) async throws -> Set<String>

    /// A worker's intake: the oldest pending messages (as `pending`) of conversations it holds
    /// or can claim until `until` (as `claim`), after claiming them; messages of conversations
    /// another worker holds, and of those in `skipping` (the worker's batches in flight), are left
    /// out. `skipping` maps each conversation in flight to the `seq` its batch was read through:
    /// its messages up to there are in flight, those after it were not read, and the read's
    /// `readThrough` stays below the first of them (read again once the batch is written), not
    /// below the messages in flight (a read would then walk the batches in flight again). `holds` says which conversations the worker already
    /// holds long enough not to claim them again (stores that keep leases themselves may decide
    /// that on their own). Stores that can read and claim in one statement do (PostgreSQL: so
    /// that workers sharing a database read disjoint conversations); the default is `pending`,
    /// then `claim` of what `holds` does not cover.
    ///
    /// With a `share` other than `.all`, only conversations in that share are read (workers
    /// sharing a store split the conversations between them, see `members`).
    func claimPending(bot: String, after cursor: Int64, limit: Int, worker: String, until: Date,
                      skipping: [String: Int64], share: Share, holds: @Sendable (String) -> Bool) async throws -> Intake

    /// The workers of `group` alive now, sorted, `worker` among them: it says it is alive until
    /// `until` (a worker calls it again well before; a time past: it leaves). Workers reading the same bot's
    /// conversations split them by their place in this list (`Share`). Stores without it
    /// answer `[worker]`: every worker reads every conversation, and leases keep them apart.
    func members(group: String, worker: String, until: Date) async throws -> [String]

    /// Gives up `worker`'s leases (on shutdown, or when its share changed), except those of the
    /// conversations in `keeping` (its batches in flight).
    func release(bot: String, worker: String, keeping: Set<String>) async throws

    /// Writes a message as a backend would.
    @discardableResult
    func append(_ message: NewMessage) async throws -> StoredMessage

    /// Every message of a conversation, in order (bot replies and notices included).
    func transcript(conversation: String) async throws -> [StoredMessage]

    /// Conversations waiting for an agent, oldest handoff first (the seed's agent dashboard).
    func inbox(bot: String) async throws -> [InboxEntry]

    /// Notifications raised after `seq`, in order.
    func notifications(after seq: Int64, limit: Int) async throws -> [StoredNotification]

    /// The `seq` of the newest notification (0: none): where a worker starting up begins
    /// delivering. Stores answer it with one query; the default pages through them all.
    func lastNotificationSeq() async throws -> Int64

    /// Ends the connection; further calls fail.
    func close() async throws

    /// The highest `seq` in the store, inbound or not (0 when empty). Read it before `pending`;
    /// when `pending` comes back empty, wait with `waitForChanges(after:)` from it, so that the
    /// bot's own replies (which also take sequence numbers) do not wake the wait at once.
    func latestSeq() async throws -> Int64

    /// The conversation's fields as the backend wrote them, or `nil` for an unknown conversation:
    /// what the worker copies into a new `ConversationState` (channel, locale, customer).
    func conversation(_ id: String) async throws -> ConversationInfo?

    /// The states of several conversations for `bot` at once; conversations without one are
    /// absent. Stores answer it with one query where they can.
    func states(bot: String, conversations: [String]) async throws -> [String: ConversationState]

    /// Group commit: writes each commit as `commit(_:)` would, in order (a later commit sees the
    /// effects of earlier ones in the batch), and returns one result per commit. A conflict or a
    /// duplicate in the batch does not undo the others, but a conversation's commits after one
    /// that was not written are not written either (`BatchLinks`). Stores that can write the whole batch in
    /// one transaction do so; the default commits one by one.
    func commit(batch: [Commit]) async throws -> [CommitResult]
}

extension ChatStore {
    /// No change signal.
    public var changeSignal: ChangeSignal? { nil }

    public var workerExecutor: (any TaskExecutor)? { nil }

    /// Nothing to ready.
    public func warmUp() async throws {}

    /// Not used: the cursor moves by what the store finds done.
    public func progress(bot: String, worker: String, share: Share, safe: Int64?) async throws {}

    /// Signals that do not name their messages.
    public func notified(since generation: UInt64) -> Notified? { nil }

    /// Every conversation, no share (one worker, or a store whose workers do not split).
    public func claimPending(bot: String, after cursor: Int64, limit: Int, worker: String, until: Date,
                             skipping: [String: Int64], holds: @Sendable (String) -> Bool) async throws -> Intake {
        try await claimPending(bot: bot, after: cursor, limit: limit, worker: worker, until: until, skipping: skipping,
                               share: .all, holds: holds)
    }

    /// Gives up all of `worker`'s leases.
    public func release(bot: String, worker: String) async throws {
        try await release(bot: bot, worker: worker, keeping: [])
    }

    public func lastNotificationSeq() async throws -> Int64 {
        var last: Int64 = 0
        while let seq = try await notifications(after: last, limit: 10_000).last?.seq { last = seq }
        return last
    }

    /// Alone: this store does not keep track of workers.
    public func members(group: String, worker: String, until: Date) async throws -> [String] { [worker] }

    /// One `state(bot:conversation:)` per conversation.
    public func states(bot: String, conversations: [String]) async throws -> [String: ConversationState] {
        var out: [String: ConversationState] = [:]
        for c in Set(conversations) {
            if let s = try await state(bot: bot, conversation: c) { out[c] = s }
        }
        return out
    }

    /// `pending` then `claim`. Sequence numbers here commit in order (one writer at a time), so
    /// the read covers everything up to the last message it returned.
    public func claimPending(bot: String, after cursor: Int64, limit: Int, worker: String, until: Date,
                             skipping: [String: Int64], share: Share, holds: @Sendable (String) -> Bool) async throws -> Intake {
        // Page by page until the batch is full: what the read leaves out (conversations in
        // flight, other shares) costs another page only when it was there. At most four pages.
        var read: [StoredMessage] = []
        var kept: [StoredMessage] = []
        for _ in 0..<4 {
            let page = try await pending(bot: bot, after: read.last?.seq ?? cursor, limit: limit)
            read += page
            kept += skipping.isEmpty && share == .all ? page
                : page.filter { skipping[$0.conversationID] == nil && share.contains($0.conversationID) }
            if kept.count >= limit || page.count < limit { break }
        }
        let batch = Array(kept.prefix(limit))
        var seen = Set<String>()
        let wanted = batch.map(\.conversationID).filter { !holds($0) && seen.insert($0).inserted }
        let claimed = wanted.isEmpty ? [] : try await claim(bot: bot, conversations: wanted, worker: worker, until: until)
        var through = kept.count > limit ? batch.last!.seq : read.last?.seq ?? cursor
        // A message skipped as in flight, after what its batch read, is read again once the batch is written.
        if let skipped = read.first(where: { m in skipping[m.conversationID].map { m.seq > $0 } ?? false }) {
            through = min(through, skipped.seq - 1)
        }
        return Intake(messages: batch.filter { claimed.contains($0.conversationID) || holds($0.conversationID) },
                      readThrough: max(cursor, through))
    }

    /// One `commit(_:)` per commit, in order; a commit after one of its conversation that was not
    /// written is not tried (`BatchLinks`).
    public func commit(batch: [Commit]) async throws -> [CommitResult] {
        var results: [CommitResult] = []
        results.reserveCapacity(batch.count)
        var links = BatchLinks<String>()
        for c in batch { results.append(try await links.result(of: c) { try await commit(c) }) }
        return results
    }
}

/// Which of a bot's conversations a worker reads when workers share a store: those whose
/// slot (a hash of the conversation id, modulo `count`) is `index`. A worker's share is its place
/// among the live workers (`ChatStore.members`). Shares only save work: leases and the commit's
/// checks keep conversations apart while workers disagree about them, as when one has just
/// joined or died.
public struct Share: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    public var count: Int
    public static let all = Share(index: 0, count: 1)

    public init(index: Int, count: Int) {
        self.count = max(1, count)
        self.index = min(max(0, index), self.count - 1)
    }

    /// `worker`'s share among `members` (sorted): `.all` when it is not among them.
    public init(of worker: String, among members: [String]) {
        guard let i = members.firstIndex(of: worker) else { self = .all; return }
        self.init(index: i, count: members.count)
    }

    /// Whether `conversation` is in this share, by FNV-1a of its UTF-8 (stores that filter in
    /// SQL use their own hash, the same for all their workers).
    public func contains(_ conversation: String) -> Bool {
        guard count > 1 else { return true }
        var h: UInt32 = 2_166_136_261
        for b in conversation.utf8 { h = (h ^ UInt32(b)) &* 16_777_619 }
        return Int(h & 0x7fff_ffff) % count == index
    }

    public var description: String { "\(index + 1)/\(count)" }

    /// The group (`ChatStore.members`) of the workers that split `bot`'s conversations.
    public static func group(of bot: String) -> String { "usher:workers:" + bot }
}

/// What a store's change signals say of the inbound messages (`ChatStore.notified(since:)`).
public struct Notified: Sendable, Equatable {
    /// Every inbound message above this `seq` is signalled; those at or below it may have been
    /// written before the store was listening (a backlog), and were not.
    public var complete: Int64
    /// The newest `seq` signalled.
    public var newest: Int64

    public init(complete: Int64, newest: Int64) {
        self.complete = complete
        self.newest = newest
    }

    /// Whether a read that covered everything through `seq` left nothing signalled to read.
    public func covered(by seq: Int64) -> Bool { seq >= complete && seq >= newest }
}

/// What a worker's read (`ChatStore.claimPending`) returns.
public struct Intake: Sendable {
    /// The messages of conversations the worker now holds, in `seq` order.
    public var messages: [StoredMessage]
    /// Every inbound message after the read's cursor up to here was looked at: those not
    /// returned are done or held by another worker. The next read may start after it. It stops
    /// below the first hole in the sequence — a number taken by a transaction that had not
    /// committed when read — and below the first message skipped as in flight, so that both are
    /// still read.
    public var readThrough: Int64
    /// The states of the returned messages' conversations (absent: none yet), when the store
    /// read them with the batch; nil: ask `states(bot:conversations:)`.
    public var states: [String: ConversationState]?
    /// The lowest `seq` among the inbound messages not done that the read passed over below
    /// `readThrough` — of conversations another worker held, or claimed at the same instant —
    /// which a later read must look at again (the worker's rescan starts just below it); nil:
    /// it passed over none, and reads may go on from `readThrough` alone. Stores that do not
    /// tell say 0, the default: the worker rescans from the cursor every `rescanInterval`.
    public var passedOver: Int64?

    /// The store did not go to the database for it (PostgreSQL: taken from the NOTIFYs): the
    /// next intake is likely as instant, and the worker waits for a write to end before it
    /// rather than after (the messages that come meanwhile join that batch).
    public var instant = false

    public init(messages: [StoredMessage], readThrough: Int64, states: [String: ConversationState]? = nil,
                passedOver: Int64? = 0) {
        self.messages = messages
        self.readThrough = readThrough
        self.states = states
        self.passedOver = passedOver
    }
}

/// A conversation's own fields, as the backend created it.
public struct ConversationInfo: Sendable, Hashable, Codable {
    public var id: String
    /// The sender id of the first customer message.
    public var customerID: String?
    public var channel: String?
    public var locale: String?
    /// When its first message was written.
    public var createdAt: Date
    public init(id: String, customerID: String?, channel: String?, locale: String?, createdAt: Date) {
        self.id = id
        self.customerID = customerID
        self.channel = channel
        self.locale = locale
        self.createdAt = createdAt
    }
}

/// A conversation waiting for an agent.
public struct InboxEntry: Sendable, Hashable, Codable {
    public var conversationID: String
    public var customerName: String?
    public var queue: String?
    public var reason: String?
    public var waitingSince: Date
    public var lastMessage: String?
    public init(conversationID: String, customerName: String?, queue: String?, reason: String?,
                waitingSince: Date, lastMessage: String?) {
        self.conversationID = conversationID
        self.customerName = customerName
        self.queue = queue
        self.reason = reason
        self.waitingSince = waitingSince
        self.lastMessage = lastMessage
    }
}

/// A notification as stored, with its place in the notification order.
public struct StoredNotification: Sendable, Hashable, Codable {
    public var seq: Int64
    public var bot: String
    public var notification: AgentNotification
    public init(seq: Int64, bot: String, notification: AgentNotification) {
        self.seq = seq
        self.bot = bot
        self.notification = notification
    }
}

/// A store operation that failed for a reason outside the contract (I/O, a lost connection).
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String
    /// Whether trying again later may succeed (busy, connection lost).
    public var isTransient: Bool
    public init(_ code: String, _ message: String, transient: Bool = false) {
        self.code = code
        self.message = message
        self.isTransient = transient
    }
    public var description: String { "\(code): \(message)" }
}
