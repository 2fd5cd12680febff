/// The store's SQL statements, prepared once per connection and kept (`SQLiteConnection.statement`).
/// `package` so that the benchmark's bare C loop runs exactly the same SQL.
enum Query: Int, CaseIterable {
    case begin, commit, rollback, savepoint, release, rollbackToSavepoint
    case dataVersion, latestSeq, lastNotificationSeq
    case pending, cursor, advanceCursor
    case state, states
    case stateMeta, earlierUndone, agentAfter
    case upsertConversationOnCommit, insertOutgoing, insertNotification, openHandoff, closeHandoff
    case updateConversationOnCommit, updateState, insertState
    case claim, release_
    case upsertConversationOnAppend, insertMessage, messageByID
    case transcript, inbox, notifications, conversation
    case deliveryMarks, outgoingAfter, handoffsAfter, markDelivered
    case insertTagChange, tagChangesAfter

    var sql: String {
        switch self {
        case .begin: StoreSQL.begin
        case .commit: "COMMIT"
        case .rollback: "ROLLBACK"
        case .savepoint: "SAVEPOINT usher_commit"
        case .release: "RELEASE usher_commit"
        case .rollbackToSavepoint: "ROLLBACK TO usher_commit"
        case .dataVersion: "PRAGMA data_version"
        case .latestSeq: StoreSQL.latestSeq
        case .lastNotificationSeq: "SELECT coalesce(max(seq), 0) FROM notifications"
        case .pending: StoreSQL.pending
        case .cursor: "SELECT seq FROM cursors WHERE bot = ?1"
        case .advanceCursor: StoreSQL.advanceCursor
        case .state: StoreSQL.state
        case .states: StoreSQL.states
        case .stateMeta: StoreSQL.stateMeta
        case .earlierUndone: StoreSQL.earlierUndone
        case .agentAfter: StoreSQL.agentAfter
        case .upsertConversationOnCommit: StoreSQL.upsertConversationOnCommit
        case .insertOutgoing: StoreSQL.insertOutgoing
        case .insertNotification: StoreSQL.insertNotification
        case .openHandoff: StoreSQL.openHandoff
        case .closeHandoff: StoreSQL.closeHandoff
        case .updateConversationOnCommit: StoreSQL.updateConversationOnCommit
        case .updateState: StoreSQL.updateState
        case .insertState: StoreSQL.insertState
        case .claim: StoreSQL.claim
        case .release_: "DELETE FROM leases WHERE bot = ?1 AND worker = ?2 AND conversation_id NOT IN (SELECT value FROM json_each(?3))"
        case .upsertConversationOnAppend: StoreSQL.upsertConversationOnAppend
        case .insertMessage: StoreSQL.insertMessage
        case .messageByID: "SELECT \(StoreSQL.messageColumns) FROM messages WHERE id = ?1"
        case .transcript: "SELECT \(StoreSQL.messageColumns) FROM messages WHERE conversation_id = ?1 ORDER BY seq"
        case .inbox: StoreSQL.inbox
        case .notifications: StoreSQL.notifications
        case .conversation: "SELECT id, customer_id, channel, locale, created_at FROM conversations WHERE id = ?1"
        case .deliveryMarks: "SELECT stream, seq FROM deliveries WHERE channel = ?1"
        case .outgoingAfter:
            "SELECT \(StoreSQL.messageColumns) FROM messages WHERE seq > ?1 AND idempotency_key IS NOT NULL ORDER BY seq LIMIT ?2"
        case .handoffsAfter: """
            SELECT id, bot, conversation_id, idempotency_key, message_id, queue, reason, customer_name, rule_id, waiting_since
            FROM handoffs WHERE id > ?1 ORDER BY id LIMIT ?2
            """
        case .markDelivered: """
            INSERT INTO deliveries (channel, stream, seq) VALUES (?1, ?2, ?3)
            ON CONFLICT (channel, stream) DO UPDATE SET seq = excluded.seq
            """
        case .insertTagChange: """
            INSERT INTO tag_changes (bot, conversation_id, idempotency_key, message_id, added, removed, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (idempotency_key) DO NOTHING
            """
        case .tagChangesAfter: """
            SELECT seq, bot, conversation_id, idempotency_key, message_id, added, removed, created_at
            FROM tag_changes WHERE seq > ?1 ORDER BY seq LIMIT ?2
            """
        }
    }
}

/// SQL text of the hot path, shared with the benchmark.
package enum StoreSQL {
    package static let begin = "BEGIN IMMEDIATE"

    /// Inbound: customer and agent messages, and close events.
    package static let inbound = "(m.kind = 'close' OR m.sender_type IN ('customer', 'agent'))"

    /// The columns of `SQLiteStore.message`; `pending` reads the first ten, then the
    /// conversation's channel and locale.
    package static let messageColumns =
        "seq, id, conversation_id, kind, sender_type, sender_id, sender_name, content, created_at, rule_id, quick_replies"

    package static let latestSeq = "SELECT coalesce(max(seq), 0) FROM messages"

    /// Not done by bot `bot`: above the watermark of its conversation. Commits are in
    /// per-conversation order, so every inbound message of a conversation at or below
    /// `bot_state.last_seq` is done, and none above it.
    static func undone(bot: String) -> String {
        "m.seq > coalesce((SELECT b.last_seq FROM bot_state AS b WHERE b.bot = \(bot) AND b.conversation_id = m.conversation_id), 0)"
    }

    /// ?1 cursor, ?2 bot, ?3 limit. A walk of the rowid (= seq) b-tree from the cursor, one
    /// primary-key probe of `bot_state` per inbound message, one of `conversations` per result
    /// (CROSS JOIN keeps `messages` the outer loop).
    package static let pending = """
        SELECT m.seq, m.id, m.conversation_id, m.kind, m.sender_type, m.sender_id, m.sender_name, m.content,
               m.created_at, m.rule_id, c.channel, c.locale
        FROM messages AS m CROSS JOIN conversations AS c ON c.id = m.conversation_id
        WHERE m.seq > ?1 AND \(inbound) AND \(undone(bot: "?2"))
        ORDER BY m.seq LIMIT ?3
        """

    /// ?1 bot. Just below the oldest inbound message not done, else the newest seq; never back.
    package static let advanceCursor = """
        INSERT INTO cursors (bot, seq) VALUES (?1, coalesce(
            (SELECT m.seq - 1 FROM messages AS m
             WHERE m.seq > coalesce((SELECT seq FROM cursors WHERE bot = ?1), 0) AND \(inbound) AND \(undone(bot: "?1"))
             ORDER BY m.seq LIMIT 1),
            (SELECT coalesce(max(seq), 0) FROM messages)))
        ON CONFLICT (bot) DO UPDATE SET seq = max(seq, excluded.seq)
        """

    /// ?1 bot, ?2 conversation.
    package static let state = "SELECT state FROM bot_state WHERE bot = ?1 AND conversation_id = ?2"

    /// ?1 bot, ?2 JSON array of conversation ids.
    package static let states = """
        SELECT conversation_id, state FROM bot_state
        WHERE bot = ?1 AND conversation_id IN (SELECT value FROM json_each(?2))
        """

    /// ?1 bot, ?2 conversation.
    package static let stateMeta = "SELECT version, owner, last_seq FROM bot_state WHERE bot = ?1 AND conversation_id = ?2"

    /// ?1 conversation, ?2 the conversation's watermark (`bot_state.last_seq`), ?3 the inbound
    /// message's seq: an inbound message between them, which is not done. A range of the
    /// (conversation_id, seq) index, usually holding only the bot's last replies.
    package static let earlierUndone = """
        SELECT 1 FROM messages AS m WHERE m.conversation_id = ?1 AND m.seq > ?2 AND m.seq < ?3 AND \(inbound) LIMIT 1
        """

    /// ?1 conversation, ?2 the inbound message's seq: a human wrote after it.
    package static let agentAfter = """
        SELECT 1 FROM messages WHERE conversation_id = ?1 AND seq > ?2 AND sender_type = 'agent' LIMIT 1
        """

    /// A commit's values for the conversation differ from the row's, so that an unchanged row is
    /// not written at all; `value(column)` is the new value (a parameter, or `excluded.column`).
    private static func conversationChanges(_ value: (String) -> String) -> String {
        ["owner", "assigned_to_agent", "customer_message_count", "tags", "metadata"]
            .map { "\($0) IS NOT \(value($0))" }.joined(separator: " OR ")
            + " OR (customer_id IS NULL AND \(value("customer_id")) IS NOT NULL)"
    }

    /// The parameters of `updateConversationOnCommit` and `upsertConversationOnCommit`, by column.
    private static let conversationParameters = [
        "customer_id": "?2", "owner": "?5", "assigned_to_agent": "?6", "customer_message_count": "?7", "tags": "?8",
        "metadata": "?9",
    ]

    /// Parameters as `upsertConversationOnCommit`; changes no row when the conversation is not
    /// there yet (then the upsert writes it), nor when nothing in it changes (`updated_at` moves
    /// with a change only).
    package static let updateConversationOnCommit = """
        UPDATE conversations SET
            owner = ?5, assigned_to_agent = ?6, customer_message_count = ?7, tags = ?8, metadata = ?9,
            updated_at = max(updated_at, ?10), customer_id = coalesce(customer_id, ?2)
        WHERE id = ?1 AND (\(conversationChanges { conversationParameters[$0]! }))
        """

    /// ?1 id, ?2 customer id, ?3 channel, ?4 locale, ?5 owner, ?6 assigned, ?7 count, ?8 tags,
    /// ?9 metadata, ?10 now.
    package static let upsertConversationOnCommit = """
        INSERT INTO conversations (id, customer_id, channel, locale, owner, assigned_to_agent, customer_message_count,
                                   tags, metadata, created_at, updated_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)
        ON CONFLICT (id) DO UPDATE SET
            owner = excluded.owner, assigned_to_agent = excluded.assigned_to_agent,
            customer_message_count = excluded.customer_message_count, tags = excluded.tags,
            metadata = excluded.metadata, updated_at = max(updated_at, excluded.updated_at),
            customer_id = coalesce(customer_id, excluded.customer_id)
        WHERE \(conversationChanges { "excluded.\($0)" })
        """

    /// ?1 idempotency key (also the id), ?2 conversation, ?3 sender type, ?4 sender id,
    /// ?5 sender name, ?6 text, ?7 at, ?8 rule, ?9 quick replies (JSON, or NULL).
    package static let insertOutgoing = """
        INSERT INTO messages (id, conversation_id, kind, sender_type, sender_id, sender_name, content, created_at,
                              rule_id, idempotency_key, quick_replies)
        VALUES (?1, ?2, 'message', ?3, ?4, ?5, ?6, ?7, ?8, ?1, ?9)
        ON CONFLICT DO NOTHING
        """

    /// ?1 bot, ?2 key, ?3 conversation, ?4 queue, ?5 reason, ?6 text, ?7 customer name,
    /// ?8 last message, ?9 is handoff, ?10 at.
    package static let insertNotification = """
        INSERT INTO notifications (bot, idempotency_key, conversation_id, queue, reason, text, customer_name,
                                   last_message, is_handoff, created_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
        ON CONFLICT DO NOTHING
        """

    /// ?1 bot, ?2 conversation, ?3 key, ?4 inbound id, ?5 queue, ?6 reason, ?7 customer name,
    /// ?8 rule, ?9 now.
    package static let openHandoff = """
        INSERT INTO handoffs (bot, conversation_id, idempotency_key, message_id, queue, reason, customer_name, rule_id,
                              waiting_since)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
        ON CONFLICT DO NOTHING
        """

    /// ?1 bot, ?2 conversation, ?3 now.
    package static let closeHandoff =
        "UPDATE handoffs SET ended_at = ?3 WHERE bot = ?1 AND conversation_id = ?2 AND ended_at IS NULL"

    /// ?1 bot, ?2 conversation, ?3 version, ?4 owner, ?5 last inbound seq, ?6 state JSON,
    /// ?7 rule-set version, ?8 now. (An UPDATE of a known row, or an INSERT of a new one, is
    /// cheaper than an upsert here: the upsert needs a statement journal.)
    package static let updateState = """
        UPDATE bot_state SET version = ?3, owner = ?4, last_seq = max(last_seq, ?5), state = ?6, rule_set_version = ?7,
                             updated_at = ?8
        WHERE bot = ?1 AND conversation_id = ?2
        """

    /// Parameters as `updateState`.
    package static let insertState = """
        INSERT INTO bot_state (bot, conversation_id, version, owner, last_seq, state, rule_set_version, updated_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
        """

    /// ?1 bot, ?2 conversation, ?3 worker, ?4 until, ?5 now. Changes one row when the lease is
    /// free, expired or the worker's own.
    package static let claim = """
        INSERT INTO leases (bot, conversation_id, worker, until) VALUES (?1, ?2, ?3, ?4)
        ON CONFLICT (bot, conversation_id) DO UPDATE SET worker = excluded.worker, until = excluded.until
        WHERE leases.worker = excluded.worker OR leases.until <= ?5
        """

    /// ?1 id, ?2 customer id (NULL unless a customer wrote), ?3 channel, ?4 locale, ?5 at.
    package static let upsertConversationOnAppend = """
        INSERT INTO conversations (id, customer_id, channel, locale, created_at, updated_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?5)
        ON CONFLICT (id) DO UPDATE SET
            customer_id = coalesce(customer_id, excluded.customer_id), channel = coalesce(channel, excluded.channel),
            locale = coalesce(locale, excluded.locale), updated_at = max(updated_at, excluded.updated_at)
        """

    /// ?1 id, ?2 conversation, ?3 kind, ?4 sender type, ?5 sender id, ?6 sender name, ?7 text, ?8 at.
    package static let insertMessage = """
        INSERT INTO messages (id, conversation_id, kind, sender_type, sender_id, sender_name, content, created_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
        ON CONFLICT (id) DO NOTHING
        """

    /// ?1 bot.
    package static let inbox = """
        SELECT h.conversation_id, h.customer_name, h.queue, h.reason, h.waiting_since,
               (SELECT m.content FROM messages AS m
                WHERE m.conversation_id = h.conversation_id AND m.sender_type = 'customer'
                ORDER BY m.seq DESC LIMIT 1)
        FROM handoffs AS h
        WHERE h.bot = ?1 AND h.ended_at IS NULL
        ORDER BY h.waiting_since, h.conversation_id
        """

    /// ?1 after, ?2 limit.
    package static let notifications = """
        SELECT seq, bot, idempotency_key, conversation_id, queue, reason, text, customer_name, last_message,
               is_handoff, created_at
        FROM notifications WHERE seq > ?1 ORDER BY seq LIMIT ?2
        """
}
