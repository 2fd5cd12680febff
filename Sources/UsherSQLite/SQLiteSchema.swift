/// The native schema (DESIGN.md §7) as numbered migrations. Migration `n` takes a database from
/// schema version `n - 1` to `n`; append new ones at the end, never edit a released one.
package enum SQLiteSchema {
    /// The migrations, in order; `migrations[0]` is version 1.
    package static let migrations: [(description: String, sql: String)] = [
        ("native schema: conversations, messages, bot state, done marks, cursors, leases, notifications, handoffs", v1),
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
}
