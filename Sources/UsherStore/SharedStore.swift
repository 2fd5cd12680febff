public import Foundation
public import UsherEngine
import UsherJSON

/// A store that many workers share (DESIGN.md §8): conversations leased to one worker at a time,
/// split between the live workers (`Share`), read and claimed in one call where the store can.
/// Without it the worker runs alone on the store (every commit stays correct with several —
/// `commit` keeps order and exactly-once — but they would do each other's work).
public protocol SharedStore: SequencedStore {
    /// Leases conversations to `worker` until `until`; returns those it now holds (free, expired
    /// or already its own).
    func claim(bot: String, conversations: [String], worker: String, until: Date) async throws -> Set<String>

    /// Gives up `worker`'s leases (on shutdown, or when its share changed), except those of the
    /// conversations in `keeping` (its batches in flight).
    func release(bot: String, worker: String, keeping: Set<String>) async throws

    /// A worker's intake: the oldest pending messages (as `pending`) of conversations it holds
    /// or can claim until `until` (as `claim`), after claiming them; messages of conversations
    /// another worker holds, and of those in `skipping` (the worker's batches in flight), are left
    /// out. `skipping` maps each conversation in flight to the `seq` its batch was read through:
    /// its messages up to there are in flight, those after it were not read, and the read's
    /// `readThrough` stays below the first of them (read again once the batch is written), not
    /// below the messages in flight (a read would then walk the batches in flight again).
    /// `holds` says which conversations the worker already holds long enough not to claim them
    /// again (stores that keep leases themselves may decide that on their own). Stores that can
    /// read and claim in one statement do (PostgreSQL: so that workers sharing a database read
    /// disjoint conversations); the default is `pending`, then `claim` of what `holds` does not
    /// cover.
    ///
    /// With a `share` other than `.all`, only conversations in that share are read (workers
    /// sharing a store split the conversations between them, see `members`).
    func claimPending(bot: String, after cursor: Int64, limit: Int, worker: String, until: Date,
                      skipping: [String: Int64], share: Share, holds: @Sendable (String) -> Bool) async throws -> Intake

    /// The workers of `group` alive now, sorted, `worker` among them: it says it is alive until
    /// `until` (a worker calls it again well before; a time past: it leaves). Workers reading the
    /// same bot's conversations split them by their place in this list (`Share`). Default
    /// `[worker]`: every worker reads every conversation, and leases keep them apart.
    func members(group: String, worker: String, until: Date) async throws -> [String]

    /// Where `worker`'s reads of `bot` stand, for `advanceCursor`: every inbound message of
    /// `share` at or below `safe` is done (its batches read or written and what its reads
    /// passed over are all above it); nil: not known (until its reads after a share change, or
    /// after a commit that had to wait, have gone on from the cursor). Done is for good, so a
    /// word stays true however old. A store whose `advanceCursor` walks the messages from the
    /// cursor may start the walk at the lowest `safe` of the live workers of
    /// `Share.group(of: bot)`, once their shares split the conversations between them.
    /// Default: ignored.
    func progress(bot: String, worker: String, share: Share, safe: Int64?) async throws
}

extension SharedStore {
    /// Not used: the cursor moves by what the store finds done.
    public func progress(bot: String, worker: String, share: Share, safe: Int64?) async throws {}

    /// Alone: this store does not keep track of workers.
    public func members(group: String, worker: String, until: Date) async throws -> [String] { [worker] }

    /// Gives up all of `worker`'s leases.
    public func release(bot: String, worker: String) async throws {
        try await release(bot: bot, worker: worker, keeping: [])
    }

    /// Every conversation, no share (one worker, or a store whose workers do not split).
    public func claimPending(bot: String, after cursor: Int64, limit: Int, worker: String, until: Date,
                             skipping: [String: Int64], holds: @Sendable (String) -> Bool) async throws -> Intake {
        try await claimPending(bot: bot, after: cursor, limit: limit, worker: worker, until: until, skipping: skipping,
                               share: .all, holds: holds)
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
            let page: [StoredMessage] = try await pending(bot: bot, after: read.last?.seq ?? cursor, limit: limit)
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
}

/// Which of a bot's conversations a worker reads when workers share a store: those whose
/// slot (a hash of the conversation id, modulo `count`) is `index`. A worker's share is its place
/// among the live workers (`SharedStore.members`). Shares only save work: leases and the commit's
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
        return Int(FNV1a.hash32(conversation) & 0x7fff_ffff) % count == index
    }

    public var description: String { "\(index + 1)/\(count)" }

    /// The group (`SharedStore.members`) of the workers that split `bot`'s conversations.
    public static func group(of bot: String) -> String { "usher:workers:" + bot }
}

/// What a worker's read (`SharedStore.claimPending`) returns.
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

