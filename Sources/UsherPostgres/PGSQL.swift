import Synchronization
import UsherStore

/// Every statement the PostgreSQL store runs, generated once from the layout. Batches travel as
/// arrays (`unnest`), so a group commit of 512 messages is a dozen statements, not thousands.
/// `package` so that the benchmark hands pgbench exactly these statements.
package struct PGSQL: Sendable {
    let l: PGLayout

    init(_ layout: PGLayout) { l = layout }

    /// Each statement's text, built on first use and kept: a store asks for a statement on
    /// every call, and building `claimPending` from the layout again each time cost the worker
    /// a fifth of its CPU at 1,000 messages a second.
    private let built = Built()

    private final class Built: Sendable {
        let texts = Mutex<[String: String?]>([:])
    }

    /// The text of the statement named `name` (the property asking), built by `build` once.
    private func optionalText(_ name: String = #function, _ build: () -> String?) -> String? {
        if let text = built.texts.withLock({ $0[name] }) { return text }
        // Built outside the lock: a statement may be made of others (`commitStates`).
        let text = build()
        built.texts.withLock { $0[name] = text }
        return text
    }

    private func text(_ name: String = #function, _ build: () -> String) -> String {
        optionalText(name, build)!
    }

    private var u: String { l.usher }

    // MARK: intake

    /// Inbound messages of `m` not done by bot `bot` (a parameter): without a done mark.
    ///
    /// Unlike SQLite's per-conversation watermark, a mark per message: PostgreSQL hands out
    /// sequence numbers before commit, so a backend that does not lock the conversation row can
    /// commit a conversation's messages out of seq order, and a watermark would pass over the
    /// late one for good.
    ///
    /// Probed message by message through the marks' key (`OFFSET 0` keeps PostgreSQL from
    /// turning the `EXISTS` into a join or a hashed subplan). The reads and the cursor's walk go
    /// through the messages in seq order and stop early, but a plan made once for any parameters
    /// could instead hash every done mark of the bot — a scan of the whole table for each read or
    /// move (13–27 ms with 85,000 marks, for a read of one message): as a value in the select
    /// list, and in the WHERE clause at some table sizes (a hash anti join in the walk's plan
    /// with 80,000 marks and 60,000 messages).
    private func undone(bot: String) -> String {
        "NOT EXISTS (SELECT 1 FROM \(u).processed AS p WHERE p.bot = \(bot) AND p.message_id = \(l.messageID) OFFSET 0)"
    }

    /// $1 cursor, $2 bot, $3 limit.
    package var pending: String { text {
        """
        SELECT \(l.messageColumns)
        FROM \(l.messagesJoined)
        WHERE m.\(l.mSeq) > $1::int8 AND \(l.inbound) AND \(undone(bot: "$2"))
        ORDER BY m.\(l.mSeq) LIMIT $3::int8
        """
    } }

    /// $1 cursor, $2 bot, $3 limit, $4 worker, $5 lease end (epoch seconds), $6 seconds, $7
    /// conversations to skip (text[]: the worker's batches in flight), $8 and $9 the share (count
    /// and index; `shareSlot`), $10 the seq each conversation of $7 was read through (int8[]):
    /// `pending` and `claim` in one statement. The oldest pending messages of the share's
    /// conversations that no other live worker holds; the leases among them that are not this
    /// worker's for at least $6 more seconds are taken (inserted in a fixed order; free or expired
    /// ones taken over, one another worker took meanwhile left alone), and the messages of the
    /// conversations the worker now holds are returned — so workers sharing a database read
    /// disjoint conversations, a claim costs no round trip of its own, and a lease is written
    /// only when it needs renewing. Each
    /// row: `PGLayout.messageColumns`, the seq and conversation id again, the conversation's state
    /// (NULL: none yet), which the worker asks for next, how far the read covered
    /// (`Intake.readThrough`), and the first message it passed over (`Intake.passedOver`; NULL:
    /// none).
    package var claimPending: String { text {
        """
        WITH cand AS (
            SELECT * FROM (
                SELECT \(l.messageColumns), m.\(l.mSeq) AS usher_seq, m.\(l.mConversation)::text AS usher_c
                FROM \(l.messagesJoined)
                WHERE m.\(l.mSeq) > $1::int8 AND \(l.inbound) AND \(undone(bot: "$2"))
                  AND m.\(l.mConversation)::text NOT IN (SELECT unnest($7::text[]))   -- a hashed subplan, not a scan per row
                  AND ($8::int4 <= 1 OR \(Self.shareSlot("m.\(l.mConversation)::text", count: "$8::int4")) = $9::int4)
                  AND NOT EXISTS (SELECT 1 FROM \(u).leases AS h
                                  WHERE h.bot = $2 AND h.conversation_id = m.\(l.mConversation)::text AND h.worker <> $4
                                    AND h.until > clock_timestamp() AND NOT \(gone("h.worker", bot: "$2")))
                ORDER BY m.\(l.mSeq) OFFSET 0) AS p
            -- Workers reading at the same instant skip each other's conversations instead of
            -- racing for their leases: a lock per conversation until this statement ends, taken
            -- row by row in seq order, only until the limit.
            WHERE pg_try_advisory_xact_lock(\(Self.claimLockClass), hashtext($2 || p.usher_c))
            LIMIT $3::int8),
        conv AS (SELECT DISTINCT usher_c AS c FROM cand),
        kept AS (
            SELECT h.conversation_id AS c FROM \(u).leases AS h JOIN conv ON h.conversation_id = conv.c
            WHERE h.bot = $2 AND h.worker = $4 AND h.until > clock_timestamp() + make_interval(secs => $6::float8)),
        fresh AS (
            INSERT INTO \(u).leases AS l (bot, conversation_id, worker, until)
            SELECT $2, c, $4, to_timestamp($5::float8) FROM conv WHERE c NOT IN (SELECT c FROM kept) ORDER BY c
            ON CONFLICT (bot, conversation_id) DO UPDATE SET worker = excluded.worker, until = excluded.until
            WHERE l.worker = excluded.worker OR l.until <= clock_timestamp() OR \(gone("l.worker", bot: "$2"))
            RETURNING l.conversation_id AS c),
        held AS (SELECT c FROM fresh UNION ALL SELECT c FROM kept),
        span AS (
            -- How far the read covered: to its last row, or to just below the first hole or the
            -- first message it skipped as in flight that its batch did not read (after the seq
            -- the batch read that conversation through: its next message, to be read once the
            -- batch is written). And the first message of the share not done that it passed
            -- over (another worker's, or one taken at the same instant): only then must a later
            -- read look below. No parameter is named in these comments: pgbench would bind it.
            SELECT least(coalesce(min(t.prev) FILTER (WHERE t.seq > t.prev + 1), max(t.seq)),
                         coalesce(min(t.seq) FILTER (WHERE t.skipped) - 1, max(t.seq))) AS through,
                   min(t.seq) FILTER (WHERE t.passed) AS passed
            FROM (SELECT m.\(l.mSeq) AS seq, lag(m.\(l.mSeq), 1, $1::int8) OVER (ORDER BY m.\(l.mSeq)) AS prev,
                         \(l.inbound) AND m.\(l.mSeq) > f.through AS skipped,
                         -- (in this order: the probe of the done marks last, for few rows)
                         \(l.inbound) AND f.c IS NULL
                           AND ($8::int4 <= 1 OR \(Self.shareSlot("m.\(l.mConversation)::text", count: "$8::int4")) = $9::int4)
                           AND m.\(l.mConversation)::text NOT IN (SELECT c FROM held) AND \(undone(bot: "$2")) AS passed
                  FROM \(l.messages) AS m
                  LEFT JOIN unnest($7::text[], $10::int8[]) AS f(c, through) ON f.c = m.\(l.mConversation)::text
                  WHERE m.\(l.mSeq) > $1::int8 AND m.\(l.mSeq) <= (SELECT max(usher_seq) FROM cand)) AS t)
        SELECT cand.*, s.state, span.through, span.passed\(ownerColumn)
        FROM cand CROSS JOIN span
        LEFT JOIN \(u).bot_state AS s ON s.bot = $2 AND s.conversation_id = cand.usher_c\(ownerJoin("cand.usher_c"))
        WHERE usher_c IN (SELECT c FROM held)
        ORDER BY 1
        """
    } }

    /// Whether the worker `worker` of `bot` has stopped saying it is alive (`members`: its row
    /// in the bot's group has expired, 3 s after its last word): its leases are free then, not
    /// 30 s after it took them — a worker killed or failed holds up no conversation for long.
    /// A worker that never said it is alive (no row) keeps its leases to their end.
    private func gone(_ worker: String, bot: String) -> String {
        "EXISTS (SELECT 1 FROM \(u).workers AS g WHERE g.grp = \(PGText.literal(Share.group(of: ""))) || \(bot) "
            + "AND g.worker = \(worker) AND g.until <= clock_timestamp())"
    }

    /// The first key of the advisory locks `claimPending` takes ("ushr" in ASCII).
    static let claimLockClass: Int32 = 0x7573_6872

    package var latestSeq: String { text { "SELECT coalesce(max(\(l.mSeq)), 0) FROM \(l.messages)" } }

    package var cursor: String { text { "SELECT seq FROM \(u).cursors WHERE bot = $1" } }

    /// $1 bot, $2 the seq to start after, or (NULL) $3 a time (epoch seconds): just below the
    /// first message written at or after it, else the newest seq. A bot's first cursor
    /// (`PostgresStore.floor`); one already there is kept.
    package var startCursor: String { text {
        """
        INSERT INTO \(u).cursors (bot, seq)
        VALUES ($1, coalesce($2::int8, (SELECT coalesce(min(m.\(l.mSeq)) - 1, (SELECT coalesce(max(\(l.mSeq)), 0) FROM \(l.messages)))
                                       FROM \(l.messages) AS m
                                       WHERE m.\(l.mCreatedAt) >= \(l.writeTime("$3", l.messageTypes[l.mCreatedAt])))))
        ON CONFLICT (bot) DO NOTHING RETURNING seq
        """
    } }

    /// $1 bot, $2 the group of its workers (`Share.group(of:)`). Where the cursor may move, read
    /// in one statement (one snapshot, so a message committed meanwhile shows as a hole, not as
    /// done): the cursor; just below the oldest inbound message not done after where the walk
    /// starts, else the newest seq; the holes in between — sequence numbers taken by
    /// transactions not committed yet (or rolled back), each as the last number before it; and
    /// the snapshot's xmin and xmax. The walk starts at the cursor, or at the lowest `safe` the
    /// group's live workers reported (`SharedStore.progress`) when each reported one and their
    /// shares split the conversations between them — every message below it is done, and their
    /// reads never pass a hole — so that a move walks only the messages above what the workers
    /// have done, not every message since the last move (each probing its done mark).
    package var cursorTarget: String { text {
        // The steps materialized and read through scalar subqueries: their values then bound
        // index scans of `messages` (a join with them would scan from the start). Holes are
        // looked for up to the row after the target: a hole right below the oldest message not
        // done shows only in that message's row.
        """
        WITH cur AS MATERIALIZED (SELECT coalesce((SELECT seq FROM \(u).cursors WHERE bot = $1), 0) AS seq),
        low AS MATERIALIZED (
            SELECT CASE WHEN count(*) > 0 AND count(safe) = count(*) AND min(share_count) = count(*)
                             AND max(share_count) = count(*) AND count(DISTINCT share_index) = count(*)
                             AND min(share_index) >= 0 AND max(share_index) < count(*)
                        THEN min(safe) END AS seq
            FROM \(u).workers WHERE grp = $2 AND until > clock_timestamp()),
        start AS MATERIALIZED (SELECT greatest((SELECT seq FROM cur), coalesce((SELECT seq FROM low), 0)) AS seq),
        target AS MATERIALIZED (SELECT coalesce(
            (SELECT m.\(l.mSeq) - 1 FROM \(l.messages) AS m
             WHERE m.\(l.mSeq) > (SELECT seq FROM start) AND \(l.inbound) AND \(undone(bot: "$1"))
             ORDER BY m.\(l.mSeq) LIMIT 1),
            (SELECT coalesce(max(\(l.mSeq)), 0) FROM \(l.messages))) AS seq)
        SELECT (SELECT seq FROM cur), (SELECT seq FROM target), ARRAY(
            SELECT prev FROM (
                SELECT m.\(l.mSeq) AS seq, lag(m.\(l.mSeq), 1, (SELECT seq FROM start)) OVER (ORDER BY m.\(l.mSeq)) AS prev
                FROM \(l.messages) AS m WHERE m.\(l.mSeq) > (SELECT seq FROM start) AND m.\(l.mSeq) <= (SELECT seq FROM target) + 1
            ) AS t WHERE t.seq > t.prev + 1 ORDER BY t.prev LIMIT 100)::text,
            pg_snapshot_xmin(pg_current_snapshot())::text::int8, pg_snapshot_xmax(pg_current_snapshot())::text::int8
        """
    } }

    /// $1 group, $2 worker, $3 share count, $4 share index, $5 safe (NULL: not known).
    package var progress: String { text {
        """
        UPDATE \(u).workers SET share_count = $3::int4, share_index = $4::int4, safe = $5::int8
        WHERE grp = $1 AND worker = $2
        """
    } }

    /// $1 bot, $2 seq.
    package var setCursor: String { text {
        """
        INSERT INTO \(u).cursors (bot, seq) VALUES ($1, $2::int8)
        ON CONFLICT (bot) DO UPDATE SET seq = greatest(\(u).cursors.seq, excluded.seq)
        """
    } }

    // MARK: state

    /// $1 bot, $2 conversation.
    var state: String { text { "SELECT state FROM \(u).bot_state WHERE bot = $1 AND conversation_id = $2" } }

    /// $1 bot, $2 conversations (text[]): each one's state, and — when the application's
    /// columns say who owns a conversation — who they say does (every conversation asked for
    /// then has a row; a NULL state: none yet).
    package var states: String { text {
        guard l.readsOwnership else {
            return "SELECT conversation_id, state FROM \(u).bot_state WHERE bot = $1 AND conversation_id = ANY($2::text[])"
        }
        return """
        SELECT w.c, s.state\(ownerColumn) FROM unnest($2::text[]) AS w(c)
        LEFT JOIN \(u).bot_state AS s ON s.bot = $1 AND s.conversation_id = w.c\(ownerJoin("w.c"))
        """
    } }

    /// `, <who owns it>` when the application's columns say who owns a conversation: a last
    /// column of a read, over the conversation row `ownerJoin` joins.
    private var ownerColumn: String { l.readsOwnership ? ", \(l.owner("oc"))" : "" }

    /// The conversation's row as `oc`, for `ownerColumn`.
    private func ownerJoin(_ conversation: String) -> String {
        l.readsOwnership ? "\nLEFT JOIN \(l.conversations) AS oc ON oc.\(l.cID) = \(l.conversationID(conversation))" : ""
    }

    // MARK: commit — checks

    /// $1 bots, $2 message ids.
    package var processed: String { text {
        """
        SELECT p.bot, p.message_id FROM unnest($1::text[], $2::text[]) AS w(b, id)
        JOIN \(u).processed AS p ON p.bot = w.b AND p.message_id = w.id
        """
    } }

    /// $1 bots, $2 conversations: the existing states, locked in a fixed order (no deadlocks
    /// between workers committing overlapping batches): bytewise, as `PGCommit` sends the
    /// states `commitStates` updates.
    package var lockStates: String { text {
        """
        SELECT s.bot, s.conversation_id, s.version, s.owner
        FROM \(u).bot_state AS s JOIN unnest($1::text[], $2::text[]) AS w(b, c) ON s.bot = w.b AND s.conversation_id = w.c
        ORDER BY s.bot COLLATE "C", s.conversation_id COLLATE "C" FOR UPDATE OF s
        """
    } }

    /// The order in which `lockStates` locks states (bytewise, `COLLATE "C"`), for the states
    /// `commitStates` updates: whether state `a` comes before state `b`.
    package static func lockOrder(_ a: (bot: String, conversation: String), _ b: (bot: String, conversation: String)) -> Bool {
        a.bot != b.bot ? a.bot.utf8.lexicographicallyPrecedes(b.bot.utf8) : a.conversation.utf8.lexicographicallyPrecedes(b.conversation.utf8)
    }

    /// Through a mapping, `, <the bot's cursor>)`, closing the `greatest(` that `undoneBetween`
    /// opens: the application's history below a bot's first cursor (`PostgresStore.floor`) was
    /// never Usher's to answer, and a conversation that has some must not wait for it. (Usher's
    /// own schema has no such history, and its cursor never passes a message not done.)
    private var historyFloor: String {
        l.isNative ? "" : ", coalesce((SELECT k.seq FROM \(u).cursors AS k WHERE k.bot = w.b), 0))"
    }

    /// $1 bots, $2 conversations, $3 high (the newest inbound seq of the batch): inbound messages
    /// not done between the state's watermark and `high` — the per-conversation order check. The
    /// watermark is read here (the row is locked by `lockStates` before), so that both go out in
    /// one round trip.
    package var undoneBetween: String { text {
        """
        SELECT w.b, w.c, m.\(l.mSeq) FROM unnest($1::text[], $2::text[], $3::int8[]) AS w(b, c, hi)
        CROSS JOIN LATERAL (SELECT \(l.isNative ? "" : "greatest(")coalesce((SELECT s.last_seq FROM \(u).bot_state AS s
                                             WHERE s.bot = w.b AND s.conversation_id = w.c), 0)\(historyFloor) AS lo) AS s
        JOIN \(l.messages) AS m ON m.\(l.mConversation) = \(l.messageConversationID("w.c")) AND m.\(l.mSeq) > s.lo AND m.\(l.mSeq) < w.hi
        WHERE \(l.inbound) AND \(undone(bot: "w.b"))
        """
    } }

    /// $1 conversations: their rows locked (in a fixed order) before the agent check, so that a
    /// backend writing a message through its conversation row (as `append` does) either
    /// committed before the check — and is seen — or takes its sequence number after this
    /// commit. Needs UPDATE on a column of the table; nil when Usher writes no column there.
    package var lockConversations: String? { optionalText {
        guard !conversationWrites.isEmpty || !l.handoffWrites.isEmpty || l.cUpdatedAt != nil else { return nil }
        return """
        SELECT 1 FROM \(l.conversations) AS c JOIN unnest($1::text[]) AS w(c) ON c.\(l.cID) = \(l.conversationID("w.c"))
        ORDER BY c.\(l.cID) FOR UPDATE OF c
        """
    } }

    /// $1 conversations, $2 low: the newest agent message after `low`, per conversation.
    package var agentAfter: String { text {
        """
        SELECT w.c, max(m.\(l.mSeq)) FROM unnest($1::text[], $2::int8[]) AS w(c, lo)
        JOIN \(l.messages) AS m ON m.\(l.mConversation) = \(l.messageConversationID("w.c")) AND m.\(l.mSeq) > w.lo
        WHERE \(l.isAgent) GROUP BY w.c
        """
    } }

    /// $1 conversations, $2 the owner each was decided from (`PostgresStore.presented`: its
    /// first commit's expected owner): those where the bot may not speak — decided as a
    /// person's (the engine may still answer: a session that idled out starts with the bot), or
    /// whose owner by the application's columns is no longer as decided
    /// (`PGLayout.stillOwned`): a person took one the bot answered, or gave back one it had.
    /// Their replies are not written (`.silenced`). Nil unless the application's columns say
    /// who owns a conversation.
    package var ownersChanged: String? { optionalText {
        guard l.readsOwnership else { return nil }
        return """
        SELECT w.c FROM unnest($1::text[], $2::text[]) AS w(c, o)
        JOIN \(l.conversations) AS c ON c.\(l.cID) = \(l.conversationID("w.c"))
        WHERE w.o = 'agent' OR NOT (\(PGLayout.stillOwned("w.o", l.owner("c"))))
        """
    } }

    /// $1 conversations, $2 owners: raises `batchChanged` when one of them changed owner
    /// (`ownersChanged`). Sent after the conversations' rows are locked, before they are updated.
    package var expectOwners: String? { optionalText {
        ownersChanged.map { "SELECT \(u).expect_batch(NOT EXISTS (\($0)))" }
    } }

    /// The SQLSTATE `commitStates` and `expectAgents` raise when the batch is not as its commits expect.
    package static let batchChanged = "UB001"

    /// $1 bots, $2 conversations, $3 versions, $4 owners, $5 last seqs, $6 states, $7 rule-set
    /// versions (one per conversation, as `insertStates`), $8 the versions expected and $9 whether
    /// each state is expected to exist (a state can be at version 0); $10 bots and $11 inbound
    /// seqs (one per commit). The states of a commit written in one round trip (`PGCommit`),
    /// written on what the commits expect, in one statement that raises `batchChanged` unless
    /// the two-round-trip commit's reads would have found it so:
    /// - each expected state is updated only at its expected version — the update locks the row,
    ///   and one another worker changed meanwhile (committed, or committing: the update waits
    ///   for it and looks again) is not updated — and every one must be;
    /// - each new state is inserted (one another worker inserted first is a unique violation:
    ///   `PGCommit.race`);
    /// - no inbound message is left undone between each state's watermark and the batch's
    ///   newest message of its conversation but the same bot's messages of the batch (the
    ///   per-conversation order check), read from the watermarks as they were before this
    ///   statement: the parts of one statement do not see each other's writes, and a watermark
    ///   read here is the one the update then finds, or the update fails.
    ///
    /// No done-mark check: a message of the batch another worker marked done is a unique
    /// violation at `insertProcessed`, at the end of the same transaction.
    package var commitStates: String { text {
        """
        WITH w AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::int8[], $6::text[],
                                        $7::text[], $8::int4[], $9::bool[]) AS w(b, c, v, o, ls, st, rv, ev, x)),
        updated AS (
            UPDATE \(u).bot_state AS s SET version = w.v, owner = w.o, last_seq = greatest(s.last_seq, w.ls), state = w.st,
                   rule_set_version = w.rv, updated_at = now()
            FROM w WHERE w.x AND s.bot = w.b AND s.conversation_id = w.c AND s.version = w.ev
            RETURNING 1),
        inserted AS (
            INSERT INTO \(u).bot_state (bot, conversation_id, version, owner, last_seq, state, rule_set_version)
            SELECT w.b, w.c, w.v, w.o, w.ls, w.st, w.rv FROM w WHERE NOT w.x)
        SELECT \(u).expect_batch(
            (SELECT count(*) FROM updated) = (SELECT count(*) FROM w WHERE w.x)
            AND NOT EXISTS (SELECT 1 FROM (\(Self.renumber(undoneBetween, [1, 2, 5]))) AS x(b, c, seq)
                            WHERE (x.b, x.seq) NOT IN (SELECT * FROM unnest($10::text[], $11::int8[]))))
        """
    } }

    /// $1 conversations, $2 low: raises `batchChanged` when an agent wrote after `low` in one of
    /// them (`agentAfter`). Sent after the conversations' rows are locked (`lockConversations`),
    /// so that its snapshot sees what the lock waited for.
    package var expectAgents: String { text {
        "SELECT \(u).expect_batch(NOT EXISTS (SELECT 1 FROM (\(agentAfter)) AS a))"
    } }

    /// `sql` with its parameter `$n` renamed `$numbers[n - 1]`.
    static func renumber(_ sql: String, _ numbers: [Int]) -> String {
        replacingParameters(in: sql) { "$\(numbers[$0 - 1])" }
    }

    /// `sql` with each parameter `$n` replaced by `replacement(n)` (the benchmark turns them
    /// into pgbench variables).
    package static func replacingParameters(in sql: String, with replacement: (Int) -> String) -> String {
        var out = ""
        var chars = sql.makeIterator()
        var pending = chars.next()
        while let ch = pending {
            pending = chars.next()
            guard ch == "$", let d = pending, d.isASCII, d.isNumber else { out.append(ch); continue }
            var digits = ""
            while let d = pending, d.isASCII, d.isNumber { digits.append(d); pending = chars.next() }
            out += replacement(Int(digits)!)
        }
        return out
    }

    // MARK: commit — writes

    /// The conversation columns a commit writes, in parameter order after the id: (column,
    /// value expression over `w` and `c`).
    package var conversationWrites: [(column: String, param: String)] {
        var out: [(String, String)] = []
        if let c = l.cOwner { out.append((c, "owner")) }
        if let c = l.cAssigned { out.append((c, "assigned")) }
        if let c = l.cCount { out.append((c, "count")) }
        if let c = l.cTags { out.append((c, "tags")) }
        if let c = l.cMetadata { out.append((c, "metadata")) }
        // The customer id only in the native schema: a helpdesk's own is set by the helpdesk
        // (and often of another type than Usher's sender ids).
        if l.isNative, let c = l.cCustomerID { out.append((c, "customer")) }
        return out
    }

    /// $1 conversations, then one text[] per `conversationWrites`, then now (float8[]); when the
    /// application's columns say who owns a conversation, then the owner each conversation's
    /// first commit of the batch decided from (text[]) and whether it leaves the bot (bool[]).
    ///
    /// A row is updated only when a value changes (its `updated_at` too: a commit that changes
    /// nothing there leaves the application's row as it was). When the application's columns
    /// say who owns a conversation, Usher writes only in one that was the bot's when decided and
    /// still is (`PGLayout.owner`): never in a conversation a person has, nor over a person's
    /// taking it meanwhile. There, a conversation leaving the bot (a handoff, or an agent's
    /// message) gets the mapping's `handoff` values.
    package var updateConversations: String? { optionalText {
        let writes = conversationWrites
        let handoff = l.handoffWrites
        if writes.isEmpty && handoff.isEmpty { return nil }
        let ownership = l.readsOwnership
        let names = ["c"] + writes.map(\.param) + ["now"] + (ownership ? ["o", "h"] : [])
        let types = ["text"] + writes.map { _ in "text" } + ["float8"] + (ownership ? ["text", "bool"] : [])
        let params = names.indices.map { "$\($0 + 1)::\(types[$0])[]" }
        var sets: [String] = []
        var changes: [String] = []
        for w in writes {
            let cast = l.cast("w.\(w.param)", to: w.column)
            let value = w.param == "customer" ? "coalesce(c.\(w.column), \(cast))" : cast
            sets.append("\(w.column) = \(value)")
            changes.append("c.\(w.column) IS DISTINCT FROM \(value)")
        }
        var handoffChanges: [String] = []
        for (column, value) in handoff {
            // Within a CASE a column's default is its expression, not DEFAULT.
            let v = l.written(value, into: l.conversationTypes[column]) ?? l.conversationDefaults[column] ?? "NULL"
            sets.append("\(column) = CASE WHEN w.h THEN \(v) ELSE c.\(column) END")
            handoffChanges.append("c.\(column) IS DISTINCT FROM \(v)")
        }
        if !handoffChanges.isEmpty { changes.append("(w.h AND (\(handoffChanges.joined(separator: " OR "))))") }
        if let up = l.cUpdatedAt { sets.append("\(up) = greatest(c.\(up), \(l.writeTime("w.now", l.conversationTypes[up])))") }
        let owned = ownership ? "\n  AND w.o = 'bot' AND \(l.owner("c")) = 'bot'" : ""
        return """
        UPDATE \(l.conversations) AS c SET \(sets.joined(separator: ", "))
        FROM unnest(\(params.joined(separator: ", "))) AS w(\(names.joined(separator: ", ")))
        WHERE c.\(l.cID) = \(l.conversationID("w.c"))\(owned)
          AND (\(changes.joined(separator: " OR ")))
        """
    } }

    /// $1 keys, $2 conversations, $3 sender values, $4 sender ids, $5 names, $6 texts, $7 times,
    /// $8 rules, $9 quick replies (JSON text, or NULL), and with a written value from the inbound
    /// message's row (`message.x`) $10 the inbound seqs; in order, a key already written keeps its row. The mapping's written values
    /// (`PGLayout.messageWrites`) go into their columns, in place of Usher's own where they name
    /// a mapped one; values of the conversation's row are read from it as the reply is written.
    package var insertOutgoing: String { text {
        var columns: [String] = []
        var values: [String] = []
        let written = Set(l.messageWrites.map(\.column))
        // Each value cast to its column's type: the parameters are text.
        func add(_ column: String?, _ value: String) {
            guard let column, !written.contains(column) else { return }
            columns.append(column)
            values.append(column == l.mCreatedAt ? l.writeTime(value, l.messageTypes[column]) : l.castMessage(value, to: column))
        }
        if l.isNative { add(l.mID, "w.k") }
        add(l.mConversation, "w.c")
        add(l.mKind, PGText.literal(l.kindMessage))
        add(l.mSender, "w.s")
        add(l.mSenderID, "w.sid")
        add(l.mSenderName, "w.sn")
        add(l.mContent, "w.t")
        add(l.mCreatedAt, "w.at")
        add(l.mRuleID, "w.r")
        add(l.mKey, "w.k")
        // NULL for a message without any, or `[]` where the column takes no NULL.
        add(l.mQuickReplies, l.mQuickReplies.flatMap { l.messageTypes[$0] }?.notNull == true ? "coalesce(w.q, '[]')" : "w.q")
        for (column, value) in l.messageWrites {
            guard let v = l.written(value, into: l.messageTypes[column]) else { continue }
            columns.append(column)
            values.append(v)
        }
        let inbound = l.writesFromInbound
        var from = """
            unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[], $9::text[]\(inbound ? ", $10::int8[]" : ""))
                 WITH ORDINALITY AS w(k, c, s, sid, sn, t, at, r, q, \(inbound ? "i, " : "")n)
            """
        if l.writesFromConversation { from += "\nLEFT JOIN \(l.conversations) AS c ON c.\(l.cID) = \(l.conversationID("w.c"))" }
        if inbound { from += "\nLEFT JOIN \(l.messages) AS im ON im.\(l.mSeq) = w.i" }
        return """
        INSERT INTO \(l.messages) (\(columns.joined(separator: ", ")))
        SELECT \(values.joined(separator: ", "))
        FROM \(from)
        ORDER BY w.n
        ON CONFLICT DO NOTHING
        """
    } }

    /// $1 bots, $2 keys, $3 conversations, $4 queues, $5 reasons, $6 texts, $7 customer names,
    /// $8 last messages, $9 handoff flags, $10 times.
    package var insertNotifications: String { text {
        """
        INSERT INTO \(u).notifications (bot, idempotency_key, conversation_id, queue, reason, text, customer_name,
                                        last_message, is_handoff, created_at)
        SELECT w.b, w.k, w.c, w.q, w.r, w.t, w.cn, w.lm, w.h, to_timestamp(w.at)
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                    $9::bool[], $10::float8[]) WITH ORDINALITY AS w(b, k, c, q, r, t, cn, lm, h, at, n)
        ORDER BY w.n
        ON CONFLICT DO NOTHING
        """
    } }

    /// $1 bots, $2 conversations, $3 keys, $4 inbound ids, $5 queues, $6 reasons, $7 customers,
    /// $8 rules: the handoffs that open (the inbox), in order.
    package var openHandoffs: String { text {
        """
        INSERT INTO \(u).handoffs (bot, conversation_id, idempotency_key, message_id, queue, reason, customer_name,
                                   rule_id, waiting_since)
        SELECT w.b, w.c, w.k, w.m, w.q, w.r, w.cn, w.ru, clock_timestamp()
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
             WITH ORDINALITY AS w(b, c, k, m, q, r, cn, ru, n)
        ORDER BY w.n
        ON CONFLICT DO NOTHING
        """
    } }

    /// $1 bots, $2 conversations: their open handoffs end.
    package var closeHandoffs: String { text {
        """
        UPDATE \(u).handoffs AS h SET ended_at = clock_timestamp()
        FROM unnest($1::text[], $2::text[]) AS w(b, c)
        WHERE h.bot = w.b AND h.conversation_id = w.c AND h.ended_at IS NULL
        """
    } }

    /// $1 bots, $2 conversations, $3 versions, $4 owners, $5 last seqs, $6 states, $7 rule-set
    /// versions. A state another worker created first is a unique violation: the transaction
    /// ends, and the batch is classified again (`PGCommit.lostRace`).
    package var insertStates: String { text {
        """
        INSERT INTO \(u).bot_state (bot, conversation_id, version, owner, last_seq, state, rule_set_version)
        SELECT * FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::int8[], $6::text[], $7::text[])
        """
    } }

    /// Parameters as `insertStates`; the rows are locked by `lockStates` (the two-round-trip
    /// commit).
    package var updateStates: String { text {
        """
        UPDATE \(u).bot_state AS s SET version = w.v, owner = w.o, last_seq = greatest(s.last_seq, w.ls), state = w.st,
               rule_set_version = w.rv, updated_at = now()
        FROM unnest($1::text[], $2::text[], $3::int4[], $4::text[], $5::int8[], $6::text[], $7::text[])
             AS w(b, c, v, o, ls, st, rv)
        WHERE s.bot = w.b AND s.conversation_id = w.c
        """
    } }

    /// $1 bots, $2 message ids, $3 seqs, $4 conversations, $5 quarantine reasons. A done mark
    /// another worker wrote first is a unique violation, as for `insertStates`.
    package var insertProcessed: String { text {
        """
        INSERT INTO \(u).processed (bot, message_id, seq, conversation_id, quarantined)
        SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::text[], $5::text[])
        """
    } }

    // MARK: leases

    /// $1 bot, $2 conversations, $3 worker, $4 until. New leases are inserted in a fixed order;
    /// free, expired or own ones are taken over, skipping rows another worker has locked.
    package var claim: String { text {
        """
        WITH want AS (SELECT DISTINCT c FROM unnest($2::text[]) AS c),
        fresh AS (
            INSERT INTO \(u).leases (bot, conversation_id, worker, until)
            SELECT $1, c, $3, to_timestamp($4::float8) FROM want ORDER BY c
            ON CONFLICT DO NOTHING RETURNING conversation_id),
        taken AS (
            UPDATE \(u).leases AS l SET worker = $3, until = to_timestamp($4::float8)
            WHERE l.bot = $1 AND l.conversation_id IN (
                SELECT o.conversation_id FROM \(u).leases AS o
                WHERE o.bot = $1 AND o.conversation_id IN (SELECT c FROM want)
                  AND (o.worker = $3 OR o.until <= clock_timestamp() OR \(gone("o.worker", bot: "$1")))
                ORDER BY o.conversation_id FOR UPDATE OF o SKIP LOCKED)
            RETURNING l.conversation_id)
        SELECT conversation_id FROM fresh UNION SELECT conversation_id FROM taken
        """
    } }

    /// $1 bot, $2 worker, $3 conversations to keep (text[]).
    package var release: String { text {
        "DELETE FROM \(u).leases WHERE bot = $1 AND worker = $2 AND conversation_id <> ALL($3::text[])"
    } }

    /// $1 group, $2 worker, $3 seconds alive from now: the worker's row in `workers`, then the group's
    /// live rows (this worker's too, unless `until` has passed: it left). Rows dead for a
    /// minute are deleted.
    package var members: String { text {
        """
        WITH me AS (
            INSERT INTO \(u).workers (grp, worker, until) VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3::float8))
            ON CONFLICT (grp, worker) DO UPDATE SET until = excluded.until
            RETURNING worker, until),
        gone AS (DELETE FROM \(u).workers WHERE grp = $1 AND worker <> $2 AND until < clock_timestamp() - interval '1 minute')
        SELECT w FROM (SELECT worker FROM \(u).workers WHERE grp = $1 AND until > clock_timestamp() AND worker <> $2
                       UNION SELECT worker FROM me WHERE until > clock_timestamp()) AS t(w)
        ORDER BY w COLLATE "C"
        """
    } }

    /// The share a conversation falls in, of `count` (`Share`): the same in every session.
    static func shareSlot(_ conversation: String, count: String) -> String {
        "((hashtext(\(conversation))::int8 & 2147483647) % \(count))"
    }

    // MARK: backend side

    /// $1 id, $2 customer id, $3 channel, $4 locale, $5 at.
    var upsertConversation: String { text {
        var columns = [l.cID]
        var values = [l.conversationID("$1")]
        var updates: [String] = []
        func add(_ column: String?, _ param: String, keep: Bool = true) {
            guard let column else { return }
            columns.append(column)
            // Not given: the column's default, where it has one, rather than NULL.
            let value = l.cast(param, to: column)
            values.append(l.conversationDefaults[column].map { "coalesce(\(value), \($0))" } ?? value)
            if keep { updates.append("\(column) = coalesce(\(l.conversations).\(column), excluded.\(column))") }
        }
        add(l.cCustomerID, "$2")
        add(l.cChannel, "$3")
        add(l.cLocale, "$4")
        if let c = l.cCreatedAt { columns.append(c); values.append(l.writeTime("$5", l.conversationTypes[c])) }
        if let c = l.cUpdatedAt {
            columns.append(c); values.append(l.writeTime("$5", l.conversationTypes[c]))
            updates.append("\(c) = greatest(\(l.conversations).\(c), excluded.\(c))")
        }
        let conflict = updates.isEmpty ? "DO NOTHING" : "DO UPDATE SET \(updates.joined(separator: ", "))"
        return """
        INSERT INTO \(l.conversations) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))
        ON CONFLICT (\(l.cID)) \(conflict)
        """
    } }

    /// $1 id, $2 conversation, $3 kind, $4 sender value, $5 sender id, $6 name, $7 text, $8 at.
    var insertMessage: String { text {
        var columns: [String] = []
        var values: [String] = []
        func add(_ column: String?, _ value: String) {
            if let column { columns.append(column); values.append(l.castMessage(value, to: column)) }
        }
        add(l.mID, "$1")
        add(l.mConversation, "$2")
        add(l.mKind, "$3")
        add(l.mSender, "$4")
        add(l.mSenderID, "$5")
        add(l.mSenderName, "$6")
        add(l.mContent, "$7")
        columns.append(l.mCreatedAt); values.append(l.writeTime("$8", l.messageTypes[l.mCreatedAt]))
        let seq = "\(l.mSeq)"
        return """
        INSERT INTO \(l.messages) (\(columns.joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))
        ON CONFLICT DO NOTHING RETURNING \(seq), \(l.mID.map { "\($0)::text" } ?? "\(seq)::text")
        """
    } }

    /// $1 message id.
    var messageByID: String { text {
        "SELECT \(l.transcriptColumns) FROM \(l.messagesJoined) WHERE \(l.messageID) = $1"
    } }

    /// $1 conversation.
    var transcript: String { text {
        "SELECT \(l.transcriptColumns) FROM \(l.messagesJoined) WHERE m.\(l.mConversation) = \(l.messageConversationID("$1")) ORDER BY m.\(l.mSeq)"
    } }

    /// $1 bot.
    var inbox: String { text {
        """
        SELECT h.conversation_id, h.customer_name, h.queue, h.reason, extract(epoch FROM h.waiting_since)::float8,
               (SELECT m.\(l.mContent)::text FROM \(l.messages) AS m
                WHERE m.\(l.mConversation) = \(l.messageConversationID("h.conversation_id")) AND \(l.isCustomer)
                ORDER BY m.\(l.mSeq) DESC LIMIT 1)
        FROM \(u).handoffs AS h
        WHERE h.bot = $1 AND h.ended_at IS NULL
        ORDER BY h.waiting_since, h.conversation_id
        """
    } }

    var lastNotificationSeq: String { text { "SELECT coalesce(max(seq), 0) FROM \(u).notifications" } }

    /// $1 after, $2 limit.
    package var notifications: String { text {
        """
        SELECT seq, bot, idempotency_key, conversation_id, queue, reason, text, customer_name, last_message,
               is_handoff, extract(epoch FROM created_at)::float8
        FROM \(u).notifications WHERE seq > $1::int8 ORDER BY seq LIMIT $2::int8
        """
    } }

    /// $1 conversation.
    var conversation: String { text {
        func col(_ c: String?) -> String { c.map { "\($0)::text" } ?? "NULL" }
        return """
        SELECT \(l.cID)::text, \(col(l.cCustomerID)), \(col(l.cChannel)), \(col(l.cLocale)),
               \(l.cCreatedAt.map { l.readTime($0) } ?? "NULL")
        FROM \(l.conversations) WHERE \(l.cID) = \(l.conversationID("$1"))
        """
    } }
}
