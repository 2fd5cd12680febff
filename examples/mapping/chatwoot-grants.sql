-- The role Usher runs as on Chatwoot's database (examples/mapping/chatwoot.yaml), with the
-- least it needs. Run as the owner of Chatwoot's tables (the role its migrations ran as), or a
-- superuser; the tests run exactly this (Tests/UsherSystemTests/AppSchemaTests.swift).
-- Roles belong to the whole server: a second database on it reuses the role.
DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'usher') THEN CREATE ROLE usher LOGIN; END IF;
END $$;
-- Usher's own tables (state, done marks, cursors, leases, the inbox) go in a schema of its own.
CREATE SCHEMA usher AUTHORIZATION usher;
-- Chatwoot's tables: read them; write the replies and notices into messages; on a handoff, the
-- columns `ownership.handoff` names (add team_id, assignee_id… when the mapping writes them).
GRANT USAGE ON SCHEMA public TO usher;
GRANT SELECT ON conversations, messages TO usher;
GRANT UPDATE (status) ON conversations TO usher;
GRANT INSERT ON messages TO usher;
GRANT USAGE ON SEQUENCE messages_id_seq TO usher;     -- a reply's id comes from messages' serial
-- With `intake: trigger` only (a NOTIFY trigger on messages; its function lives in `usher`):
-- GRANT TRIGGER ON messages TO usher;
