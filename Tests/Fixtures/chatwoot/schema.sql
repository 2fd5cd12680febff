-- Chatwoot's chat tables as PostgreSQL DDL, for Usher's tests (Tests/UsherSystemTests/ChatwootTests.swift)
-- and examples/mapping/chatwoot.yaml.
--
-- Translated by hand from db/schema.rb of Chatwoot (https://github.com/chatwoot/chatwoot, schema
-- version 2025_08_16_044639), the tables Usher reads and writes and the ones they name: accounts,
-- users, agent_bots, inboxes, contacts, conversations, messages — every column, default, NOT NULL
-- and the indexes of conversations and messages as Rails creates them (`t.datetime` is
-- timestamp(6) without time zone holding UTC, `precision: nil` plain timestamp, `t.string`
-- character varying, `id: :serial` a serial id, the default id a bigserial), and the triggers
-- that number each account's conversations. Left out: the other tables, foreign keys Rails does
-- not declare either, the pg_trgm and vector indexes (extensions).
--
-- Chatwoot is Copyright (c) 2017-2025 Chatwoot Inc., under the MIT (Expat) license: "Permission
-- is hereby granted, free of charge, to any person obtaining a copy of this software and
-- associated documentation files (the "Software"), to deal in the Software without restriction,
-- including without limitation the rights to use, copy, modify, merge, publish, distribute,
-- sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
-- furnished to do so, subject to the following conditions: The above copyright notice and this
-- permission notice shall be included in all copies or substantial portions of the Software.
-- THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND."
--
-- The enums, from Chatwoot's models: conversations.status open 0, resolved 1, pending 2,
-- snoozed 3; messages.message_type incoming 0, outgoing 1, activity 2, template 3;
-- messages.sender_type (polymorphic) 'Contact', 'User', 'AgentBot', NULL for activity.

CREATE TABLE accounts (
    id                    serial PRIMARY KEY,
    name                  character varying NOT NULL,
    created_at            timestamp without time zone NOT NULL,
    updated_at            timestamp without time zone NOT NULL,
    locale                integer DEFAULT 0,
    domain                character varying(100),
    support_email         character varying(100),
    feature_flags         bigint DEFAULT 0 NOT NULL,
    auto_resolve_duration integer,
    limits                jsonb DEFAULT '{}'::jsonb,
    custom_attributes     jsonb DEFAULT '{}'::jsonb,
    status                integer DEFAULT 0,
    internal_attributes   jsonb DEFAULT '{}'::jsonb NOT NULL,
    settings              jsonb DEFAULT '{}'::jsonb
);
CREATE INDEX index_accounts_on_status ON accounts (status);

CREATE TABLE users (
    id                     serial PRIMARY KEY,
    provider               character varying DEFAULT 'email' NOT NULL,
    uid                    character varying DEFAULT '' NOT NULL,
    encrypted_password     character varying DEFAULT '' NOT NULL,
    reset_password_token   character varying,
    reset_password_sent_at timestamp without time zone,
    remember_created_at    timestamp without time zone,
    sign_in_count          integer DEFAULT 0 NOT NULL,
    current_sign_in_at     timestamp without time zone,
    last_sign_in_at        timestamp without time zone,
    current_sign_in_ip     character varying,
    last_sign_in_ip        character varying,
    confirmation_token     character varying,
    confirmed_at           timestamp without time zone,
    confirmation_sent_at   timestamp without time zone,
    unconfirmed_email      character varying,
    name                   character varying NOT NULL,
    display_name           character varying,
    email                  character varying,
    tokens                 json,
    created_at             timestamp without time zone NOT NULL,
    updated_at             timestamp without time zone NOT NULL,
    pubsub_token           character varying,
    availability           integer DEFAULT 0,
    ui_settings            jsonb DEFAULT '{}'::jsonb,
    custom_attributes      jsonb DEFAULT '{}'::jsonb,
    type                   character varying,
    message_signature      text
);
CREATE INDEX index_users_on_email ON users (email);
CREATE UNIQUE INDEX index_users_on_pubsub_token ON users (pubsub_token);
CREATE UNIQUE INDEX index_users_on_uid_and_provider ON users (uid, provider);

CREATE TABLE agent_bots (
    id           bigserial PRIMARY KEY,
    name         character varying,
    description  character varying,
    outgoing_url character varying,
    created_at   timestamp(6) without time zone NOT NULL,
    updated_at   timestamp(6) without time zone NOT NULL,
    account_id   bigint,
    bot_type     integer DEFAULT 0,
    bot_config   jsonb DEFAULT '{}'::jsonb
);
CREATE INDEX index_agent_bots_on_account_id ON agent_bots (account_id);

CREATE TABLE inboxes (
    id                            serial PRIMARY KEY,
    channel_id                    integer NOT NULL,
    account_id                    integer NOT NULL,
    name                          character varying NOT NULL,
    created_at                    timestamp without time zone NOT NULL,
    updated_at                    timestamp without time zone NOT NULL,
    channel_type                  character varying,
    enable_auto_assignment        boolean DEFAULT true,
    greeting_enabled              boolean DEFAULT false,
    greeting_message              character varying,
    email_address                 character varying,
    working_hours_enabled         boolean DEFAULT false,
    out_of_office_message         character varying,
    timezone                      character varying DEFAULT 'UTC',
    enable_email_collect          boolean DEFAULT true,
    csat_survey_enabled           boolean DEFAULT false,
    allow_messages_after_resolved boolean DEFAULT true,
    auto_assignment_config        jsonb DEFAULT '{}'::jsonb,
    lock_to_single_conversation   boolean DEFAULT false NOT NULL,
    portal_id                     bigint,
    sender_name_type              integer DEFAULT 0 NOT NULL,
    business_name                 character varying,
    csat_config                   jsonb DEFAULT '{}'::jsonb NOT NULL
);
CREATE INDEX index_inboxes_on_account_id ON inboxes (account_id);

CREATE TABLE contacts (
    id                    serial PRIMARY KEY,
    name                  character varying DEFAULT '',
    email                 character varying,
    phone_number          character varying,
    account_id            integer NOT NULL,
    created_at            timestamp without time zone NOT NULL,
    updated_at            timestamp without time zone NOT NULL,
    additional_attributes jsonb DEFAULT '{}'::jsonb,
    identifier            character varying,
    custom_attributes     jsonb DEFAULT '{}'::jsonb,
    last_activity_at      timestamp without time zone,
    contact_type          integer DEFAULT 0,
    middle_name           character varying DEFAULT '',
    last_name             character varying DEFAULT '',
    location              character varying DEFAULT '',
    country_code          character varying DEFAULT '',
    blocked               boolean DEFAULT false NOT NULL
);
CREATE INDEX index_contacts_on_account_id ON contacts (account_id);
CREATE UNIQUE INDEX uniq_email_per_account_contact ON contacts (email, account_id);
CREATE UNIQUE INDEX uniq_identifier_per_account_contact ON contacts (identifier, account_id);

CREATE TABLE conversations (
    id                     serial PRIMARY KEY,
    account_id             integer NOT NULL,
    inbox_id               integer NOT NULL,
    status                 integer DEFAULT 0 NOT NULL,
    assignee_id            integer,
    created_at             timestamp without time zone NOT NULL,
    updated_at             timestamp without time zone NOT NULL,
    contact_id             bigint,
    display_id             integer NOT NULL,
    contact_last_seen_at   timestamp without time zone,
    agent_last_seen_at     timestamp without time zone,
    additional_attributes  jsonb DEFAULT '{}'::jsonb,
    contact_inbox_id       bigint,
    uuid                   uuid DEFAULT gen_random_uuid() NOT NULL,
    identifier             character varying,
    last_activity_at       timestamp without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    team_id                bigint,
    campaign_id            bigint,
    snoozed_until          timestamp without time zone,
    custom_attributes      jsonb DEFAULT '{}'::jsonb,
    assignee_last_seen_at  timestamp without time zone,
    first_reply_created_at timestamp without time zone,
    priority               integer,
    sla_policy_id          bigint,
    waiting_since          timestamp(6) without time zone,
    cached_label_list      text
);
CREATE UNIQUE INDEX index_conversations_on_account_id_and_display_id ON conversations (account_id, display_id);
CREATE INDEX index_conversations_on_id_and_account_id ON conversations (account_id, id);
CREATE INDEX conv_acid_inbid_stat_asgnid_idx ON conversations (account_id, inbox_id, status, assignee_id);
CREATE INDEX index_conversations_on_account_id ON conversations (account_id);
CREATE INDEX index_conversations_on_assignee_id_and_account_id ON conversations (assignee_id, account_id);
CREATE INDEX index_conversations_on_contact_id ON conversations (contact_id);
CREATE INDEX index_conversations_on_inbox_id ON conversations (inbox_id);
CREATE INDEX index_conversations_on_status_and_account_id ON conversations (status, account_id);
CREATE INDEX index_conversations_on_team_id ON conversations (team_id);
CREATE UNIQUE INDEX index_conversations_on_uuid ON conversations (uuid);
CREATE INDEX index_conversations_on_waiting_since ON conversations (waiting_since);

CREATE TABLE messages (
    id                        serial PRIMARY KEY,
    content                   text,
    account_id                integer NOT NULL,
    inbox_id                  integer NOT NULL,
    conversation_id           integer NOT NULL,
    message_type              integer NOT NULL,
    created_at                timestamp without time zone NOT NULL,
    updated_at                timestamp without time zone NOT NULL,
    private                   boolean DEFAULT false NOT NULL,
    status                    integer DEFAULT 0,
    source_id                 character varying,
    content_type              integer DEFAULT 0 NOT NULL,
    content_attributes        json DEFAULT '{}'::json,
    sender_type               character varying,
    sender_id                 bigint,
    external_source_ids       jsonb DEFAULT '{}'::jsonb,
    additional_attributes     jsonb DEFAULT '{}'::jsonb,
    processed_message_content text,
    sentiment                 jsonb DEFAULT '{}'::jsonb
);
CREATE INDEX idx_messages_account_content_created ON messages (account_id, content_type, created_at);
CREATE INDEX index_messages_on_account_created_type ON messages (account_id, created_at, message_type);
CREATE INDEX index_messages_on_account_id_and_inbox_id ON messages (account_id, inbox_id);
CREATE INDEX index_messages_on_account_id ON messages (account_id);
CREATE INDEX index_messages_on_conversation_account_type_created ON messages (conversation_id, account_id, message_type, created_at);
CREATE INDEX index_messages_on_conversation_id ON messages (conversation_id);
CREATE INDEX index_messages_on_created_at ON messages (created_at);
CREATE INDEX index_messages_on_inbox_id ON messages (inbox_id);
CREATE INDEX index_messages_on_sender_type_and_sender_id ON messages (sender_type, sender_id);
CREATE INDEX index_messages_on_source_id ON messages (source_id);

-- Each account numbers its own conversations (display_id), as Chatwoot's hair_trigger triggers do.
CREATE FUNCTION accounts_after_insert_row_tr() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE SEQUENCE IF NOT EXISTS conv_dpid_seq_%s', NEW.id);
    RETURN NULL;
END;
$$;
CREATE TRIGGER accounts_after_insert_row_tr AFTER INSERT ON accounts FOR EACH ROW EXECUTE FUNCTION accounts_after_insert_row_tr();

CREATE FUNCTION conversations_before_insert_row_tr() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.display_id := nextval('conv_dpid_seq_' || NEW.account_id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER conversations_before_insert_row_tr BEFORE INSERT ON conversations FOR EACH ROW EXECUTE FUNCTION conversations_before_insert_row_tr();
