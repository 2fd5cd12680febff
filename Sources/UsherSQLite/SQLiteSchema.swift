/// The native schema (DESIGN.md §7) as numbered migrations. Migration `n` takes a database from
/// schema version `n - 1` to `n`; append new ones at the end, never edit a released one.
package enum SQLiteSchema {
    /// The migrations, in order; `migrations[0]` is version 1.
    package static let migrations: [(description: String, sql: String)] = [
        ("native schema: conversations, messages, bot state, done marks, cursors, leases, notifications, handoffs", v1),
        ("lean commit: done marks folded into the per-conversation watermark, one unique index for message ids, "
         + "no AUTOINCREMENT, CHECK constraints without IN lists", v2),
        ("quick replies: messages.quick_replies, the buttons and links of a reply as JSON", v3),
        ("tag changes: what each decision's tag and untag actions changed, for channels that mirror tags elsewhere", v4),
    ]

    /// The schema version this build writes.
    package static var latestVersion: Int { migrations.count }

    static let v1 = """
    CREATE TABLE conversations (
        id                     TEXT PRIMARY KEY,
        customer_id            TEXT,
        channel                TEXT,
        locale                 TEXT,
        owner                  TEXT NOT NULL DEFAULT 'bot' CHECK (owner IN ('bot', 'waiting', 'agent')),
        assigned_to_agent      INTEGER NOT NULL DEFAULT 0,
        customer_message_count INTEGER NOT NULL DEFAULT 0,
        tags                   TEXT NOT NULL DEFAULT '[]',
        metadata               TEXT NOT NULL DEFAULT '{}',
        created_at             REAL NOT NULL,
        updated_at             REAL NOT NULL
    ) WITHOUT ROWID;

    CREATE TABLE messages (
        seq             INTEGER PRIMARY KEY AUTOINCREMENT,
        id              TEXT NOT NULL UNIQUE,
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        kind            TEXT NOT NULL DEFAULT 'message' CHECK (kind IN ('message', 'close')),
        sender_type     TEXT NOT NULL CHECK (sender_type IN ('customer', 'bot', 'system', 'agent')),
        sender_id       TEXT,
        sender_name     TEXT,
        content         TEXT NOT NULL,
        created_at      REAL NOT NULL,
        rule_id         TEXT,
        idempotency_key TEXT UNIQUE
    );
    CREATE INDEX messages_conversation ON messages (conversation_id, seq);
    -- "Has an agent written after this message?" — asked before every reply is written.
    CREATE INDEX messages_agent ON messages (conversation_id, seq) WHERE sender_type = 'agent';

    CREATE TABLE bot_state (
        bot              TEXT NOT NULL,
        conversation_id  TEXT NOT NULL REFERENCES conversations (id),
        version          INTEGER NOT NULL,
        owner            TEXT NOT NULL CHECK (owner IN ('bot', 'waiting', 'agent')),
        last_seq         INTEGER NOT NULL DEFAULT 0,
        state            TEXT NOT NULL,
        rule_set_version TEXT,
        updated_at       REAL NOT NULL,
        PRIMARY KEY (bot, conversation_id)
    ) WITHOUT ROWID;

    CREATE TABLE processed (
        bot             TEXT NOT NULL,
        message_id      TEXT NOT NULL,
        seq             INTEGER NOT NULL,
        conversation_id TEXT NOT NULL,
        committed_at    REAL NOT NULL,
        PRIMARY KEY (bot, message_id)
    ) WITHOUT ROWID;

    CREATE TABLE cursors (
        bot TEXT PRIMARY KEY,
        seq INTEGER NOT NULL
    ) WITHOUT ROWID;

    CREATE TABLE leases (
        bot             TEXT NOT NULL,
        conversation_id TEXT NOT NULL,
        worker          TEXT NOT NULL,
        until           REAL NOT NULL,
        PRIMARY KEY (bot, conversation_id)
    ) WITHOUT ROWID;
    CREATE INDEX leases_worker ON leases (bot, worker);

    CREATE TABLE notifications (
        seq             INTEGER PRIMARY KEY AUTOINCREMENT,
        bot             TEXT NOT NULL,
        idempotency_key TEXT NOT NULL UNIQUE,
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        queue           TEXT NOT NULL,
        reason          TEXT NOT NULL,
        text            TEXT NOT NULL,
        customer_name   TEXT,
        last_message    TEXT NOT NULL,
        is_handoff      INTEGER NOT NULL,
        created_at      REAL NOT NULL
    );

    CREATE TABLE handoffs (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        bot             TEXT NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        idempotency_key TEXT NOT NULL UNIQUE,
        message_id      TEXT NOT NULL,
        queue           TEXT,
        reason          TEXT,
        customer_name   TEXT,
        rule_id         TEXT,
        waiting_since   REAL NOT NULL,
        ended_at        REAL
    );
    CREATE UNIQUE INDEX handoffs_open ON handoffs (bot, conversation_id) WHERE ended_at IS NULL;
    CREATE INDEX handoffs_inbox ON handoffs (bot, waiting_since, conversation_id) WHERE ended_at IS NULL;

    CREATE TABLE deliveries (
        channel TEXT NOT NULL,
        stream  TEXT NOT NULL,
        seq     INTEGER NOT NULL,
        PRIMARY KEY (channel, stream)
    ) WITHOUT ROWID;
    """

    /// What a commit writes, made leaner (docs/store-sqlite.md, "Schema"): the statements of a
    /// commit with one reply cost half (`usher-store-bench --micro`: 16.6–18.2 → 8.5 µs).
    ///
    /// - `processed` goes: `bot_state.last_seq` already is the per-conversation watermark, and
    ///   commits are in per-conversation order, so an inbound message is done for a bot exactly
    ///   when its `seq` is at or below the watermark of its conversation. The marks are folded
    ///   in first (they agree with the watermark on any file this store wrote).
    /// - `messages.seq` loses AUTOINCREMENT (a read and a write of `sqlite_sequence` per insert):
    ///   an INTEGER PRIMARY KEY is max + 1 already, and differs only after the newest row is
    ///   deleted — rows of `messages` are never deleted.
    /// - `idempotency_key` is the message's `id` whenever it is set, a CHECK instead of a second
    ///   unique index holding the same text: unique because `id` is.
    /// - `CHECK (x IN (…))` builds a temporary b-tree on every insert and update (≈ 1.8 µs each
    ///   here); the same checks written with `=` and `OR` do not.
    ///
    /// Tables rebuilt the documented way (create, copy, drop, rename), with foreign keys off
    /// around the migration (`Migrator`).
    static let v2 = """
    UPDATE bot_state SET last_seq = max(last_seq, coalesce(
        (SELECT max(p.seq) FROM processed AS p WHERE p.bot = bot_state.bot AND p.conversation_id = bot_state.conversation_id), 0));
    DROP TABLE processed;

    CREATE TABLE conversations_v2 (
        id                     TEXT PRIMARY KEY,
        customer_id            TEXT,
        channel                TEXT,
        locale                 TEXT,
        owner                  TEXT NOT NULL DEFAULT 'bot' CHECK (owner = 'bot' OR owner = 'waiting' OR owner = 'agent'),
        assigned_to_agent      INTEGER NOT NULL DEFAULT 0,
        customer_message_count INTEGER NOT NULL DEFAULT 0,
        tags                   TEXT NOT NULL DEFAULT '[]',
        metadata               TEXT NOT NULL DEFAULT '{}',
        created_at             REAL NOT NULL,
        updated_at             REAL NOT NULL
    ) WITHOUT ROWID;
    INSERT INTO conversations_v2 (id, customer_id, channel, locale, owner, assigned_to_agent, customer_message_count, tags,
                                  metadata, created_at, updated_at)
    SELECT id, customer_id, channel, locale, owner, assigned_to_agent, customer_message_count, tags, metadata, created_at,
           updated_at
    FROM conversations;

    CREATE TABLE messages_v2 (
        seq             INTEGER PRIMARY KEY,
        id              TEXT NOT NULL UNIQUE,
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        kind            TEXT NOT NULL DEFAULT 'message' CHECK (kind = 'message' OR kind = 'close'),
        sender_type     TEXT NOT NULL
                        CHECK (sender_type = 'customer' OR sender_type = 'bot' OR sender_type = 'system' OR sender_type = 'agent'),
        sender_id       TEXT,
        sender_name     TEXT,
        content         TEXT NOT NULL,
        created_at      REAL NOT NULL,
        rule_id         TEXT,
        idempotency_key TEXT CHECK (idempotency_key IS NULL OR idempotency_key = id)
    );
    INSERT INTO messages_v2 (seq, id, conversation_id, kind, sender_type, sender_id, sender_name, content, created_at, rule_id,
                             idempotency_key)
    SELECT seq, id, conversation_id, kind, sender_type, sender_id, sender_name, content, created_at, rule_id, idempotency_key
    FROM messages ORDER BY seq;

    CREATE TABLE bot_state_v2 (
        bot              TEXT NOT NULL,
        conversation_id  TEXT NOT NULL REFERENCES conversations (id),
        version          INTEGER NOT NULL,
        owner            TEXT NOT NULL CHECK (owner = 'bot' OR owner = 'waiting' OR owner = 'agent'),
        last_seq         INTEGER NOT NULL DEFAULT 0,
        state            TEXT NOT NULL,
        rule_set_version TEXT,
        updated_at       REAL NOT NULL,
        PRIMARY KEY (bot, conversation_id)
    ) WITHOUT ROWID;
    INSERT INTO bot_state_v2 (bot, conversation_id, version, owner, last_seq, state, rule_set_version, updated_at)
    SELECT bot, conversation_id, version, owner, last_seq, state, rule_set_version, updated_at FROM bot_state;

    DROP TABLE bot_state;
    DROP TABLE messages;
    DROP TABLE conversations;
    ALTER TABLE conversations_v2 RENAME TO conversations;
    ALTER TABLE messages_v2 RENAME TO messages;
    ALTER TABLE bot_state_v2 RENAME TO bot_state;
    CREATE INDEX messages_conversation ON messages (conversation_id, seq);
    CREATE INDEX messages_agent ON messages (conversation_id, seq) WHERE sender_type = 'agent';
    """

    /// A reply's `quick_replies`: a JSON array of `{"title", "url"}` (`QuickReply.write`), NULL
    /// for a message without any. A column added, not a table rebuilt: every row before it has
    /// none.
    static let v3 = """
    ALTER TABLE messages ADD COLUMN quick_replies TEXT;
    """

    /// What each commit's `tag` and `untag` actions changed (`Commit.tagsAdded`, `tagsRemoved`),
    /// one row per commit that changed any, in commit order (`seq`): a delivery channel whose
    /// backend keeps tags of its own (Chatwoot's labels) reads them as a stream, as it reads
    /// replies and handoffs (`deliveries`). Written only for commits with tag actions.
    static let v4 = """
    CREATE TABLE tag_changes (
        seq             INTEGER PRIMARY KEY,
        bot             TEXT NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        idempotency_key TEXT NOT NULL UNIQUE,
        message_id      TEXT NOT NULL,
        added           TEXT NOT NULL,
        removed         TEXT NOT NULL,
        created_at      REAL NOT NULL
    );
    """
}
