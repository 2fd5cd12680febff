/// Usher's tables in PostgreSQL, as numbered migrations recorded in `<usher schema>.schema_version`
/// (applied under an advisory lock, so workers starting together migrate once). With the native
/// layout the first migration also creates `conversations` and `messages` (DESIGN.md §7); with a
/// mapping file those are the helpdesk's and Usher never changes their definition — except for
/// the NOTIFY trigger when the mapping asks for `intake: trigger`.
enum PGSchema {
    /// Migration `n` takes the schema from version `n - 1` to `n`; append, never edit.
    static func migrations(_ l: PGLayout) -> [(description: String, sql: String)] {
        [("usher tables: bot state, done marks, cursors, leases, notifications, handoffs"
            + (l.isNative ? "; native conversations and messages" : ""), v1(l)),
         ("live workers of each group (shares)", v2(l)),
         ("expect_batch: the guard of a commit written in one round trip", v3(l)),
         ("each live worker's share and how far its reads stand (the cursor's walk starts there)", v4(l)),
         ("messages_inbound: the inbound messages by seq, for the reads and the cursor's walk", v5(l)),
         ("messages.quick_replies: the buttons and links of a reply, as JSON", v6(l))]
    }

    /// The quick replies of a reply (native schema): a jsonb column, NULL for a message without
    /// any. Added only when Usher's role owns `messages`, as `v5`'s index; otherwise the owner
    /// adds it (docs/store-postgres.md), and until then replies are written without them
    /// (`PostgresStore` looks for the column at every start). A helpdesk's tables are never
    /// changed: a mapping names a column of its own (`messages.columns.quick_replies`).
    static func v6(_ l: PGLayout) -> String {
        guard l.isNative, let column = l.mQuickReplies else { return "" }
        return """
            DO $usher$ BEGIN
                IF pg_has_role((SELECT relowner FROM pg_class WHERE oid = to_regclass(\(PGText.literal(l.messages)))), 'USAGE') THEN
                    ALTER TABLE \(l.messages) ADD COLUMN IF NOT EXISTS \(column) jsonb;
                END IF;
            END $usher$;
            """
    }

    /// The inbound messages by seq (native schema). The reads and the cursor's walk go through
    /// the messages after a seq in order and take only the inbound ones: without it they also
    /// walk every reply and notice in between — the bot's own writes, one to three an inbound
    /// message — and a read that finds nothing walks every reply since its last message.
    /// Created only when Usher's role owns `messages` (it does when Usher created the table);
    /// otherwise the owner creates it (docs/store-postgres.md, "A least-privileged role"). A
    /// helpdesk's own tables are never changed (the docs give the statement for a mapping).
    /// On a large table the build holds up inserts until it ends: build it beforehand with
    /// `CREATE INDEX CONCURRENTLY`, and this finds it there.
    static func v5(_ l: PGLayout) -> String {
        guard l.isNative else { return "" }
        return """
            DO $usher$ BEGIN
                IF pg_has_role((SELECT relowner FROM pg_class WHERE oid = to_regclass(\(PGText.literal(l.messages)))), 'USAGE') THEN
                    \(inboundIndex(l));
                END IF;
            END $usher$;
            """
    }

    /// The statement that creates `messages_inbound` (`v5`).
    static func inboundIndex(_ l: PGLayout, concurrently: Bool = false) -> String {
        "CREATE INDEX \(concurrently ? "CONCURRENTLY " : "")IF NOT EXISTS messages_inbound ON \(l.messages) (\(l.mSeq)) WHERE \(l.inbound(nil))"
    }

    /// `SharedStore.progress`: the share each worker reads and the seq at or below which every
    /// inbound message of it is done (`PGSQL.cursorTarget` starts its walk at the
    /// lowest, when the live workers' shares split the conversations between them).
    static func v4(_ l: PGLayout) -> String {
        "ALTER TABLE \(l.usher).workers ADD COLUMN share_count integer, ADD COLUMN share_index integer, ADD COLUMN safe bigint;"
    }

    /// `PGSQL.commitStates` and `PGSQL.expectAgents` call it with whether the batch is as its
    /// commits expect: raising an error of its own (SQLSTATE `PGSQL.batchChanged`) aborts the
    /// transaction the writes were sent in, and the store checks and writes again in two round
    /// trips. A function: plain SQL cannot raise an error of its own choosing.
    static func v3(_ l: PGLayout) -> String {
        """
        CREATE FUNCTION \(l.usher).expect_batch(ok boolean) RETURNS void LANGUAGE plpgsql AS $f$
        BEGIN
            IF NOT ok THEN
                RAISE EXCEPTION 'the batch changed since it was read' USING ERRCODE = '\(PGSQL.batchChanged)';
            END IF;
        END
        $f$;
        """
    }

    /// Who is alive in each group (`SharedStore.members`): a few rows, read four times a second by
    /// every worker — a table of its own, so that the read never scans the leases.
    static func v2(_ l: PGLayout) -> String {
        """
        CREATE TABLE \(l.usher).workers (
            grp    text NOT NULL,
            worker text NOT NULL,
            until  timestamptz NOT NULL,
            PRIMARY KEY (grp, worker)
        );
        """
    }

    /// The native conversations and messages tables, created by the first migration when they
    /// are not there yet (a backend may have created them, and the worker's role may lack the
    /// right to create tables in their schema).
    static let native = """
            CREATE TABLE conversations (
                id                     text PRIMARY KEY,
                customer_id            text,
                channel                text,
                locale                 text,
                owner                  text NOT NULL DEFAULT 'bot' CHECK (owner IN ('bot', 'waiting', 'agent')),
                assigned_to_agent      boolean NOT NULL DEFAULT false,
                customer_message_count integer NOT NULL DEFAULT 0,
                tags                   jsonb NOT NULL DEFAULT '[]',
                metadata               jsonb NOT NULL DEFAULT '{}',
                created_at             timestamptz NOT NULL DEFAULT now(),
                updated_at             timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE messages (
                seq             bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                id              text NOT NULL UNIQUE,
                conversation_id text NOT NULL REFERENCES conversations (id),
                kind            text NOT NULL DEFAULT 'message' CHECK (kind IN ('message', 'close')),
                sender_type     text NOT NULL CHECK (sender_type IN ('customer', 'bot', 'system', 'agent')),
                sender_id       text,
                sender_name     text,
                content         text NOT NULL,
                created_at      timestamptz NOT NULL DEFAULT now(),
                rule_id         text,
                idempotency_key text UNIQUE
            );
            CREATE INDEX messages_conversation ON messages (conversation_id, seq);
            CREATE INDEX messages_agent ON messages (conversation_id, seq) WHERE sender_type = 'agent';
            """

    static func v1(_ l: PGLayout) -> String {
        let u = l.usher
        return """
        CREATE TABLE \(u).bot_state (
            bot              text NOT NULL,
            conversation_id  text NOT NULL,
            version          integer NOT NULL,
            owner            text NOT NULL CHECK (owner IN ('bot', 'waiting', 'agent')),
            last_seq         bigint NOT NULL DEFAULT 0,
            state            text NOT NULL,
            rule_set_version text,
            updated_at       timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (bot, conversation_id)
        );
        -- Done marks. `quarantined` says why a message was marked done without being decided.
        CREATE TABLE \(u).processed (
            bot             text NOT NULL,
            message_id      text NOT NULL,
            seq             bigint NOT NULL,
            conversation_id text NOT NULL,
            committed_at    timestamptz NOT NULL DEFAULT now(),
            quarantined     text,
            PRIMARY KEY (bot, message_id)
        );
        CREATE TABLE \(u).cursors (
            bot text PRIMARY KEY,
            seq bigint NOT NULL
        );
        CREATE TABLE \(u).leases (
            bot             text NOT NULL,
            conversation_id text NOT NULL,
            worker          text NOT NULL,
            until           timestamptz NOT NULL,
            PRIMARY KEY (bot, conversation_id)
        );
        CREATE INDEX leases_worker ON \(u).leases (bot, worker);
        CREATE TABLE \(u).notifications (
            seq             bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            bot             text NOT NULL,
            idempotency_key text NOT NULL UNIQUE,
            conversation_id text NOT NULL,
            queue           text NOT NULL,
            reason          text NOT NULL,
            text            text NOT NULL,
            customer_name   text,
            last_message    text NOT NULL,
            is_handoff      boolean NOT NULL,
            created_at      timestamptz NOT NULL
        );
        CREATE TABLE \(u).handoffs (
            id              bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            bot             text NOT NULL,
            conversation_id text NOT NULL,
            idempotency_key text NOT NULL UNIQUE,
            message_id      text NOT NULL,
            queue           text,
            reason          text,
            customer_name   text,
            rule_id         text,
            waiting_since   timestamptz NOT NULL,
            ended_at        timestamptz
        );
        CREATE UNIQUE INDEX handoffs_open ON \(u).handoffs (bot, conversation_id) WHERE ended_at IS NULL;
        CREATE INDEX handoffs_inbox ON \(u).handoffs (bot, waiting_since, conversation_id) WHERE ended_at IS NULL;
        """
    }

    /// The NOTIFY channel of this usher schema.
    static func channel(_ l: PGLayout) -> String {
        "usher_" + String(l.usher.filter { $0 != "\"" }).lowercased()
    }

    /// Installs (or refreshes) the trigger that NOTIFYs on every inbound message. On the native
    /// schema the payload is the message as the worker reads it — `PGLayout.messageColumns` as a
    /// JSON array, seq first (`PGListener.notes`), then whether it is its conversation's first
    /// (`first`) — so that the worker can take it without reading it
    /// (`PostgresStore.claimPending`); or only its seq, when the message is too long for a NOTIFY
    /// (8,000 bytes) or the payload could not be built. A second trigger (native schema) NOTIFYs
    /// the seq alone when an inbound message's row is updated: a note taken at the insert would be
    /// out of date, and the seq sends the worker to read it (an update later in the inserting transaction
    /// arrives with the insert's NOTIFY, after it). Through a mapping the payload is the seq alone:
    /// a helpdesk may write the message before its ticket's channel and locale, or change either
    /// later in the same transaction. The payload is built as the role that inserts the message:
    /// should it not read the tables (or anything else fail), the payload is the seq alone and
    /// the insert goes through as before. Run on every start under the migration lock: it
    /// follows the mapping file's current values.
    static func trigger(_ l: PGLayout) -> String {
        let inbound = l.inbound("NEW")
        let channel = PGText.literal(channel(l))
        let payload = l.isNative ? """
            BEGIN
                    SELECT json_build_array(\(l.messageColumns), \(first(l)))::text INTO payload
                    FROM \(l.messagesJoined) WHERE m.\(l.mSeq) = NEW.\(l.mSeq);
                EXCEPTION WHEN OTHERS THEN
                    payload := NULL;   -- the seq alone: the worker reads the message
                END;
            """ : "payload := NULL;"
        return """
        CREATE OR REPLACE FUNCTION \(l.usher).notify_inbound() RETURNS trigger LANGUAGE plpgsql AS $usher$
        DECLARE payload text;
        BEGIN
            \(payload)
            IF payload IS NULL OR octet_length(payload) > \(maxPayload) THEN payload := NEW.\(l.mSeq)::text; END IF;
            PERFORM pg_notify(\(channel), payload);
            RETURN NULL;
        END
        $usher$;
        CREATE OR REPLACE TRIGGER usher_notify_inbound AFTER INSERT ON \(l.messages)
            FOR EACH ROW WHEN (\(inbound)) EXECUTE FUNCTION \(l.usher).notify_inbound();
        """ + (l.isNative ? """

        CREATE OR REPLACE FUNCTION \(l.usher).notify_inbound_changed() RETURNS trigger LANGUAGE plpgsql AS $usher$
        BEGIN
            PERFORM pg_notify(\(channel), NEW.\(l.mSeq)::text);
            RETURN NULL;
        END
        $usher$;
        CREATE OR REPLACE TRIGGER usher_notify_inbound_changed AFTER UPDATE ON \(l.messages)
            FOR EACH ROW WHEN (\(inbound)) EXECUTE FUNCTION \(l.usher).notify_inbound_changed();
        """ : "")
    }

    /// The payload's last value: 1 when no inbound message of the conversation came before this
    /// one, so no bot has a state for it yet (`PostgresStore.takeNotified`); else 0.
    static func first(_ l: PGLayout) -> String {
        let earlier = l.inbound("e")
        return "(NOT EXISTS (SELECT 1 FROM \(l.messages) AS e WHERE e.\(l.mConversation) = m.\(l.mConversation) "
            + "AND e.\(l.mSeq) < m.\(l.mSeq) AND \(earlier)))::int"
    }

    /// The longest payload the trigger sends whole: PostgreSQL's limit is 8,000 bytes, channel
    /// name included.
    static let maxPayload = 7_900
}
