-- A helpdesk's own tables, as a typical ticketing product keeps its chat: tickets, and the
-- events of each ticket (customer and agent comments, automation, internal notes, "resolved").
-- examples/mapping/helpdesk.yaml points Usher at them; docs/mapping.md explains both files.
--
-- Valid PostgreSQL 15. Try it on a scratch database:
--     psql -d scratch -v ON_ERROR_STOP=1 -f examples/mapping/helpdesk-schema.sql

CREATE SCHEMA helpdesk;

CREATE TABLE helpdesk.customers (
    customer_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email        text NOT NULL UNIQUE,
    display_name text
);

CREATE TABLE helpdesk.agents (
    agent_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    display_name text NOT NULL
);

-- One row per conversation. `handled_by` is who answers it: the automation ('bot'), nobody yet
-- ('queue': a person was asked for) or a person ('human'). The helpdesk's own workflow status
-- lives in `status`; Usher does not map it and leaves it alone.
CREATE TABLE helpdesk.tickets (
    ticket_id     text PRIMARY KEY DEFAULT gen_random_uuid()::text,
    requester_id  bigint REFERENCES helpdesk.customers (customer_id),
    source        text NOT NULL DEFAULT 'web' CHECK (source IN ('web', 'email', 'whatsapp', 'app')),
    language      text,
    subject       text,
    status        text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'pending', 'solved', 'closed')),
    handled_by    text NOT NULL DEFAULT 'bot' CHECK (handled_by IN ('bot', 'queue', 'human')),
    assignee_id   bigint REFERENCES helpdesk.agents (agent_id),
    labels        jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(labels) = 'array'),
    custom_fields jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(custom_fields) = 'object'),
    opened_at     timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Every event of a ticket, in the order they happened. `event_no` comes from an identity
-- column with CACHE 1, so numbers are handed out in order across connections: it is the
-- order Usher reads new messages in (messages.columns.seq).
CREATE TABLE helpdesk.ticket_events (
    event_no        bigint GENERATED ALWAYS AS IDENTITY (CACHE 1) PRIMARY KEY,
    public_id       text NOT NULL UNIQUE DEFAULT gen_random_uuid()::text,
    ticket_id       text NOT NULL REFERENCES helpdesk.tickets (ticket_id),
    event_type      text NOT NULL DEFAULT 'comment' CHECK (event_type IN ('comment', 'resolved')),
    author_role     text NOT NULL CHECK (author_role IN ('end_user', 'agent', 'admin', 'automation', 'note')),
    author_id       text,
    author_name     text,
    body            text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    automation_rule text,
    dedupe_key      text UNIQUE
);
-- A ticket's events in order: what a worker reads when it decides a conversation.
CREATE INDEX ticket_events_by_ticket ON helpdesk.ticket_events (ticket_id, event_no);
-- The inbound events in order, for Usher's reads (docs/store-postgres.md, "The index of
-- inbound messages"): without it they walk past every automation reply and note too. The
-- condition is Usher's own test for an inbound message through helpdesk.yaml, word for word
-- (the sender values for customer and agent, the kind value for close), so that PostgreSQL
-- sees its queries fall within it. On a table in service: CREATE INDEX CONCURRENTLY.
CREATE INDEX ticket_events_inbound ON helpdesk.ticket_events (event_no)
    WHERE (author_role::text IN ('end_user', 'agent', 'admin') OR event_type::text = 'resolved');

-- The role Usher connects as, and the schema of its own tables (mapping: usher_schema).
-- It reads both tables, writes replies and notes into ticket_events, and updates the
-- mapped columns of tickets. With `intake: trigger` it installs a NOTIFY trigger on
-- ticket_events (the TRIGGER privilege; the trigger's function lives in the usher schema);
-- with `intake: poll` it changes no DDL of these tables and needs no TRIGGER privilege.
-- Roles belong to the whole server: a second scratch database on it reuses the first's.
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'usher') THEN CREATE ROLE usher LOGIN; END IF;
END $$;
CREATE SCHEMA usher AUTHORIZATION usher;
GRANT USAGE ON SCHEMA helpdesk TO usher;
GRANT SELECT ON helpdesk.customers, helpdesk.agents TO usher;
GRANT SELECT, UPDATE (handled_by, labels, custom_fields, updated_at) ON helpdesk.tickets TO usher;
GRANT SELECT, INSERT ON helpdesk.ticket_events TO usher;
GRANT TRIGGER ON helpdesk.ticket_events TO usher;

-- A few rows, so the mapping has something to read.
INSERT INTO helpdesk.customers (email, display_name) VALUES ('mei@example.com', 'Mei');
INSERT INTO helpdesk.agents (display_name) VALUES ('Ana');

INSERT INTO helpdesk.tickets (ticket_id, requester_id, source, language, subject, opened_at, updated_at)
VALUES ('7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d', 1, 'web', 'en', 'Refund', '2026-11-30 10:00:00+08', '2026-11-30 10:04:00+08');

INSERT INTO helpdesk.ticket_events (ticket_id, event_type, author_role, author_id, author_name, body, created_at, automation_rule, dedupe_key)
VALUES
    ('7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d', 'comment', 'end_user', '1', 'Mei', 'I want a refund', '2026-11-30 10:00:00+08', NULL, NULL),
    ('7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d', 'comment', 'automation', 'bot:support', 'Support', 'Sorry to hear that! Could you tell me your order number?', '2026-11-30 10:00:01+08', 'refund', 'support:1:0'),
    ('7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d', 'comment', 'end_user', '1', 'Mei', 'I want a human', '2026-11-30 10:02:00+08', NULL, NULL),
    ('7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d', 'comment', 'note', 'bot:support', 'Support', 'Connecting you with an agent…', '2026-11-30 10:02:01+08', 'wants-human', 'support:3:0'),
    ('7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d', 'comment', 'agent', '1', 'Ana', 'Hi Mei, Ana here. Refund on its way.', '2026-11-30 10:03:00+08', NULL, NULL),
    ('7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d', 'resolved', 'agent', '1', 'Ana', '', '2026-11-30 10:04:00+08', NULL, NULL);
UPDATE helpdesk.tickets SET status = 'solved' WHERE ticket_id = '7f0c2a4e-5b7d-4d8e-9c51-2f6a1e0b3c9d';
