public import Foundation
import UsherJSON
import UsherStore

/// One call a delivery channel (the webhook) owes its receiver, as its outbox keeps it. The
/// store does not read `call`: it is the channel's own encoding of the request.
public struct OutboxItem: Sendable, Hashable {
    /// Unique per channel: the call's `Idempotency-Key`.
    public var key: String
    /// Calls of one conversation go out one at a time, in the order they were added.
    public var conversation: String
    public var call: String

    public init(key: String, conversation: String, call: String) {
        self.key = key
        self.conversation = conversation
        self.call = call
    }
}

/// A call waiting in the outbox.
public struct OutboxEntry: Sendable, Hashable {
    /// Increases with every call added: the delivery order.
    public var id: Int64
    public var item: OutboxItem
    /// Attempts made so far.
    public var attempts: Int
    /// Not to be tried before.
    public var nextAt: Date
    public var lastError: String?
}

/// A call given up on: refused by the receiver (4xx), or out of attempts.
public struct DeadLetter: Sendable, Hashable, Codable {
    public var id: Int64
    public var key: String
    public var conversation: String
    public var call: String
    public var attempts: Int
    /// The receiver's last status, nil when it gave none (no connection, a timeout).
    public var status: Int?
    public var error: String
    public var failedAt: Date
    /// When it was added to the outbox.
    public var createdAt: Date
}

/// The outbox of a delivery channel that calls a receiver over the network, where a call can fail
/// and is tried again later: actions committed by the worker move into it in the transaction that
/// marks them handed on (`fillOutbox`), so none is lost or added twice, and leave it when
/// delivered — or into the dead letters. Two tables of their own in the store's file, created by
/// `prepareOutbox()` (docs/webhook.md, "State").
extension SQLiteStore {
    static let outboxSchema = """
        CREATE TABLE IF NOT EXISTS outbox (
            id           INTEGER PRIMARY KEY,
            channel      TEXT NOT NULL,
            key          TEXT NOT NULL,
            conversation TEXT NOT NULL,
            call         TEXT NOT NULL,
            attempts     INTEGER NOT NULL DEFAULT 0,
            next_at      REAL NOT NULL,
            last_error   TEXT,
            created_at   REAL NOT NULL,
            UNIQUE (channel, key)
        );
        CREATE INDEX IF NOT EXISTS outbox_conversation ON outbox (channel, conversation, id);
        CREATE TABLE IF NOT EXISTS deadletters (
            id           INTEGER PRIMARY KEY,
            channel      TEXT NOT NULL,
            key          TEXT NOT NULL,
            conversation TEXT NOT NULL,
            call         TEXT NOT NULL,
            attempts     INTEGER NOT NULL,
            status       INTEGER,
            error        TEXT NOT NULL,
            failed_at    REAL NOT NULL,
            created_at   REAL NOT NULL
        );
        CREATE INDEX IF NOT EXISTS deadletters_channel ON deadletters (channel, id);
        CREATE TABLE IF NOT EXISTS echoes (
            channel TEXT NOT NULL,
            key     TEXT NOT NULL,
            at      REAL NOT NULL,
            PRIMARY KEY (channel, key)
        ) WITHOUT ROWID;
        """

    /// Creates the outbox and dead-letter tables when the file has none yet.
    public func prepareOutbox() async throws {
        try await perform { db in try db.execute(Self.outboxSchema) }
    }

    /// Moves every action committed since the last call into `channel`'s outbox, as the calls
    /// `encode` makes of each chunk (in the order it returns them), in the transaction that marks
    /// the actions handed on (`deliverActions`): a crash leaves each action either not moved or
    /// in the outbox, never both or neither. With `tags`, the tag changes (`tag_changes`, the
    /// stream `tags` of `deliveries`) are in the chunks too, as `.tags` actions. Returns how many
    /// were moved.
    @discardableResult
    public func fillOutbox(channel: String, tags: Bool = false, _ encode: @escaping @Sendable ([StoreAction]) -> [OutboxItem])
        async throws -> Int {
        let clock = options.clock
        let db = connection
        return try await deliverActions(channel: channel, tags: tags) { actions in
            // On the connection's thread, inside deliverActions' transaction.
            try Self.insertOutbox(encode(actions), channel: channel, db, now: clock())
        }
    }

    /// The `deliveries` stream of tag changes.
    static let tagStream = "tags"

    private static func insertOutbox(_ items: [OutboxItem], channel: String, _ db: SQLiteConnection, now: Date) throws {
        let s = try db.statement(sql: """
            INSERT INTO outbox (channel, key, conversation, call, next_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
            ON CONFLICT (channel, key) DO NOTHING
            """)
        for item in items {
            defer { s.reset() }
            s.bind(1, channel)
            s.bind(2, item.key)
            s.bind(3, item.conversation)
            s.bind(4, item.call)
            s.bind(5, now)
            _ = try s.step()
        }
    }

    /// The tag changes after `seq` (a channel's mark of them), oldest first, at most `limit`.
    static func tagChanges(_ db: SQLiteConnection, after: Int64, limit: Int) throws -> [TagChangeRecord] {
        let s = try db.statement(.tagChangesAfter)
        defer { s.reset() }
        s.bind(1, after)
        s.bind(2, limit)
        var out: [TagChangeRecord] = []
        while try s.step() {
            out.append(TagChangeRecord(seq: s.int64(0), bot: s.text(1), conversationID: s.text(2), idempotencyKey: s.text(3),
                                       messageID: s.text(4), added: strings(s.text(5)), removed: strings(s.text(6)), at: s.date(7)))
        }
        return out
    }

    /// A JSON array of strings as this store wrote it; empty if it is not one.
    private static func strings(_ json: String) -> [String] {
        var text = json
        return text.withUTF8 { b in
            var r = JSONReader(b)
            return (try? r.stringArray()) ?? []
        }
    }

    /// The newest call in `channel`'s outbox (0: none): a process taking the delivery lease
    /// knows that the calls up to it may have been under way in the process before it.
    public func lastOutboxID(channel: String) async throws -> Int64 {
        try await perform { db in
            let s = try db.statement(sql: "SELECT coalesce(max(id), 0) FROM outbox WHERE channel = ?1")
            defer { s.reset() }
            s.bind(1, channel)
            return try s.step() ? s.int64(0) : 0
        }
    }

    /// The calls to make now: of each conversation not in `busy`, the oldest call, if it is due
    /// at `now` — a conversation's later calls wait for it. Oldest first, at most `limit`; and when
    /// the next of the others is due (nil: none waits).
    public func dueOutbox(channel: String, now: Date, limit: Int, busy: Set<String> = []) async throws
        -> (due: [OutboxEntry], next: Date?) {
        try await perform { db in
            let s = try db.statement(sql: """
                SELECT o.id, o.key, o.conversation, o.call, o.attempts, o.next_at, o.last_error FROM outbox AS o
                WHERE o.channel = ?1
                  AND o.id = (SELECT min(i.id) FROM outbox AS i WHERE i.channel = ?1 AND i.conversation = o.conversation)
                ORDER BY o.id
                """)
            defer { s.reset() }
            s.bind(1, channel)
            var due: [OutboxEntry] = []
            var next: Date?
            while try s.step() {
                let conversation = s.text(2)
                if busy.contains(conversation) { continue }
                let at = s.date(5)
                if at > now || due.count >= limit {
                    next = min(next ?? at, max(at, now))
                    continue
                }
                due.append(OutboxEntry(id: s.int64(0), item: OutboxItem(key: s.text(1), conversation: conversation, call: s.text(3)),
                                       attempts: s.int(4), nextAt: at, lastError: s.optionalText(6)))
            }
            return (due, next)
        }
    }

    /// When the earliest call not yet due becomes due (nil: the outbox is empty).
    public func nextOutboxDue(channel: String) async throws -> Date? {
        try await perform { db in
            let s = try db.statement(sql: "SELECT min(next_at) FROM outbox WHERE channel = ?1")
            defer { s.reset() }
            s.bind(1, channel)
            return try s.step() && !s.isNull(0) ? s.date(0) : nil
        }
    }

    /// Calls waiting in `channel`'s outbox.
    public func outboxCount(channel: String) async throws -> Int {
        try await perform { db in
            let s = try db.statement(sql: "SELECT count(*) FROM outbox WHERE channel = ?1")
            defer { s.reset() }
            s.bind(1, channel)
            return try s.step() ? s.int(0) : 0
        }
    }

    /// Keys of calls the backend has shown back to Usher (Chatwoot's webhook of a message the bot
    /// made, carrying its marker): proof the call was made, kept for `echoRetention`.
    public func recordEchoes(channel: String, keys: [String], at now: Date) async throws {
        try await perform { db in
            try Self.transaction(db) {
                let s = try db.statement(sql: "INSERT INTO echoes (channel, key, at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING")
                for key in keys {
                    defer { s.reset() }
                    s.bind(1, channel)
                    s.bind(2, key)
                    s.bind(3, now)
                    _ = try s.step()
                }
                let prune = try db.statement(sql: "DELETE FROM echoes WHERE channel = ?1 AND at < ?2")
                defer { prune.reset() }
                prune.bind(1, channel)
                prune.bind(2, now.addingTimeInterval(-Self.echoRetention))
                _ = try prune.step()
            }
        }
    }

    /// Whether the backend showed the call with `key` back (`recordEchoes`).
    public func echoed(channel: String, key: String) async throws -> Bool {
        try await perform { db in
            let s = try db.statement(sql: "SELECT 1 FROM echoes WHERE channel = ?1 AND key = ?2")
            defer { s.reset() }
            s.bind(1, channel)
            s.bind(2, key)
            return try s.step()
        }
    }

    /// How long an echo is kept: longer than any call stays in the outbox between its attempts.
    public static let echoRetention: TimeInterval = 7 * 86_400

    /// The call was delivered: it leaves the outbox.
    public func outboxDelivered(id: Int64) async throws {
        try await perform { db in
            let s = try db.statement(sql: "DELETE FROM outbox WHERE id = ?1")
            defer { s.reset() }
            s.bind(1, id)
            _ = try s.step()
        }
    }

    /// The call failed and is to be tried again at `next`: one more attempt counted.
    public func outboxRetry(id: Int64, next: Date, error: String) async throws {
        try await perform { db in
            let s = try db.statement(sql: "UPDATE outbox SET attempts = attempts + 1, next_at = ?2, last_error = ?3 WHERE id = ?1")
            defer { s.reset() }
            s.bind(1, id)
            s.bind(2, next)
            s.bind(3, error)
            _ = try s.step()
        }
    }

    /// The call is given up on: it moves from the outbox to the dead letters (its attempts
    /// counting this last one), in one transaction.
    public func outboxDeadLetter(id: Int64, status: Int?, error: String) async throws {
        let clock = options.clock
        try await perform { db in
            try Self.transaction(db) {
                let s = try db.statement(sql: """
                    INSERT INTO deadletters (channel, key, conversation, call, attempts, status, error, failed_at, created_at)
                    SELECT channel, key, conversation, call, attempts + 1, ?2, ?3, ?4, created_at FROM outbox WHERE id = ?1
                    """)
                defer { s.reset() }
                s.bind(1, id)
                if let status { s.bind(2, status) } else { s.bind(2, nil as String?) }
                s.bind(3, error)
                s.bind(4, clock())
                _ = try s.step()
                let d = try db.statement(sql: "DELETE FROM outbox WHERE id = ?1")
                defer { d.reset() }
                d.bind(1, id)
                _ = try d.step()
            }
        }
    }

    /// `channel`'s dead letters, oldest first.
    public func deadLetters(channel: String) async throws -> [DeadLetter] {
        try await perform { db in
            let s = try db.statement(sql: """
                SELECT id, key, conversation, call, attempts, status, error, failed_at, created_at FROM deadletters
                WHERE channel = ?1 ORDER BY id
                """)
            defer { s.reset() }
            s.bind(1, channel)
            var out: [DeadLetter] = []
            while try s.step() {
                out.append(DeadLetter(id: s.int64(0), key: s.text(1), conversation: s.text(2), call: s.text(3), attempts: s.int(4),
                                      status: s.isNull(5) ? nil : s.int(5), error: s.text(6), failedAt: s.date(7), createdAt: s.date(8)))
            }
            return out
        }
    }

    /// A dead letter was sent again and delivered: it is removed. False when there was none by that id.
    @discardableResult
    public func removeDeadLetter(channel: String, id: Int64) async throws -> Bool {
        try await perform { db in
            let s = try db.statement(sql: "DELETE FROM deadletters WHERE channel = ?1 AND id = ?2")
            defer { s.reset() }
            s.bind(1, channel)
            s.bind(2, id)
            _ = try s.step()
            return db.changes > 0
        }
    }

    /// The handoff `bot` has open on `conversation`: since when, to which queue, why (nil: none).
    public func openHandoff(bot: String, conversation: String) async throws -> (since: Date, queue: String?, reason: String?)? {
        try await read { db in
            let s = try db.statement(sql: """
                SELECT waiting_since, queue, reason FROM handoffs WHERE bot = ?1 AND conversation_id = ?2 AND ended_at IS NULL
                """)
            defer { s.reset() }
            s.bind(1, bot)
            s.bind(2, conversation)
            guard try s.step() else { return nil }
            return (s.date(0), s.optionalText(1), s.optionalText(2))
        }
    }
}
