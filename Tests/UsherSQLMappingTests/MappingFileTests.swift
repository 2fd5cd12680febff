import Foundation
import Testing
import UsherDiagnostics
import UsherSQLMapping

let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A mapping that must load without a diagnostic.
func mapping(_ text: String, path: String = "m.yaml", sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> SQLMapping {
    let (m, d) = SQLMapping.parse(path: path, text: text)
    #expect(d.isEmpty, "unexpected diagnostics: \(d.map(\.headline))", sourceLocation: sourceLocation)
    return try #require(m, sourceLocation: sourceLocation)
}

/// The smallest valid file: every required key, nothing else.
let minimal = """
mapping: 1
conversations:
  table: tickets
  columns: {id: ticket_id}
messages:
  table: events
  columns: {seq: n, conversation_id: ticket_id, sender_type: role, content: body, created_at: at}

"""

@Suite("Mapping files")
struct MappingFileTests {
    /// examples/mapping/helpdesk.yaml, every key used.
    @Test func helpdeskExample() throws {
        let path = repoRoot.appendingPathComponent("examples/mapping/helpdesk.yaml").path
        let (loaded, diagnostics) = SQLMapping.load(path: path)
        #expect(diagnostics.isEmpty, "\(diagnostics.map(\.headline))")
        let m = try #require(loaded)
        #expect(m.conversations == SQLMapping.Conversations(
            table: "helpdesk.tickets", id: "ticket_id", customerID: "requester_id", channel: "source",
            locale: "language", owner: "handled_by", tags: "labels", metadata: "custom_fields",
            createdAt: "opened_at", updatedAt: "updated_at",
            ownerValues: .init(bot: "bot", waiting: "queue", agent: "human")))
        #expect(m.messages == SQLMapping.Messages(
            table: "helpdesk.ticket_events", seq: "event_no", id: "public_id", conversationID: "ticket_id",
            kind: "event_type", senderType: "author_role", senderID: "author_id", senderName: "author_name",
            content: "body", createdAt: "created_at", ruleID: "automation_rule", idempotencyKey: "dedupe_key",
            senderValues: .init(customer: ["end_user"], agent: ["agent", "admin"], bot: "automation", system: "note"),
            kindValues: .init(message: "comment", close: "resolved"), time: .timestamptz))
        #expect(m.usherSchema == "usher")
        #expect(m.intake == .trigger)
        #expect(m.pollInterval == .seconds(1))
        #expect(m.path == path)
        #expect(m.conversations.assignedToAgent == nil && m.conversations.customerMessageCount == nil)
        // docs/mapping.md quotes this one.
        #expect(m.diagnostic("missing-column", "helpdesk.ticket_events has no column 'body'", at: "messages.columns.content").headline
                == "\(path):34:14: error: [missing-column] helpdesk.ticket_events has no column 'body'")
    }

    /// Every key of the format, in block style, with comments and a modeline.
    @Test func fullFile() throws {
        let m = try mapping("""
        # yaml-language-server: $schema=../../schema/mapping.schema.json
        mapping: 1
        usher_schema: usher_bot
        intake: poll
        poll_interval: 500ms
        conversations:
          table: helpdesk.tickets
          columns:
            id: ticket_id
            customer_id: requester
            channel: source
            locale: lang
            owner: handled_by
            assigned_to_agent: has_assignee
            customer_message_count: inbound_count
            tags: labels
            metadata: extra
            created_at: opened
            updated_at: touched
          owner_values:
            bot: robot
            waiting: queue
            agent: human
        messages:
          table: helpdesk.ticket_events
          columns:
            seq: event_no
            id: public_id
            conversation_id: ticket_id
            kind: event_type
            sender_type: author_role
            sender_id: author_id
            sender_name: author_name
            content: body
            created_at: created_at
            rule_id: automation_rule
            idempotency_key: dedupe_key
          sender_values:
            customer: [end_user, customer]
            agent:
              - agent
              - admin
            bot: automation
            system: note
          kind_values: {message: comment, close: resolved}
          time: epoch_ms

        """)
        #expect(m.usherSchema == "usher_bot")
        #expect(m.intake == .poll)
        #expect(m.pollInterval == .milliseconds(500))
        #expect(m.conversations.assignedToAgent == "has_assignee")
        #expect(m.conversations.customerMessageCount == "inbound_count")
        #expect(m.conversations.ownerValues == .init(bot: "robot", waiting: "queue", agent: "human"))
        #expect(m.messages.senderValues == .init(customer: ["end_user", "customer"], agent: ["agent", "admin"],
                                                 bot: "automation", system: "note"))
        #expect(m.messages.kindValues == .init(message: "comment", close: "resolved"))
        #expect(m.messages.time == .epochMillis)
        #expect(m.mappedColumns.count == 22)
    }

    /// What a file leaves out: the defaults, and no column for the optional settings.
    @Test func defaults() throws {
        let m = try mapping(minimal)
        #expect(m.usherSchema == "usher")
        #expect(m.intake == .trigger)
        #expect(m.pollInterval == .seconds(1))
        #expect(m.conversations == .init(table: "tickets", id: "ticket_id"))
        #expect(m.messages == .init(table: "events", seq: "n", conversationID: "ticket_id", senderType: "role",
                                    content: "body", createdAt: "at"))
        #expect(m.messages.id == nil, "the seq column is the message id")
        #expect(m.messages.kind == nil, "no close events")
        #expect(m.mappedColumns.map(\.column) == ["ticket_id", "n", "ticket_id", "role", "body", "at"])
    }

    @Test(arguments: [("250ms", Duration.milliseconds(250)), ("2s", .seconds(2)), ("1m30s", .seconds(90)),
                      ("10ms", .milliseconds(10)), ("1h", .seconds(3600))])
    func pollIntervals(_ text: String, _ expected: Duration) throws {
        #expect(try mapping("poll_interval: \(text)\n" + minimal).pollInterval == expected)
    }

    @Test func partialValuesKeepTheirDefaults() throws {
        let m = try mapping(minimal + """
          sender_values: {customer: visitor}
        """ + "\n")
        #expect(m.messages.senderValues == .init(customer: ["visitor"], agent: ["agent"], bot: "bot", system: "system"))
    }

    /// Upper-case names, names of 63 bytes, quoted names.
    @Test func identifiers() throws {
        let long = String(repeating: "c", count: 63)
        let m = try mapping(minimal.replacingOccurrences(of: "table: tickets", with: "table: \"Support.Tickets_2\"")
            .replacingOccurrences(of: "content: body", with: "content: \(long)"))
        #expect(m.conversations.table == "Support.Tickets_2")
        #expect(m.messages.content == long)
    }

    /// Every setting written has a location: a value where it is written, a section at its key.
    @Test func locations() throws {
        let m = try mapping("""
        mapping: 1
        intake: poll
        conversations:
          table: helpdesk.tickets
          columns:
            id: ticket_id
            owner: handled_by
          owner_values: {bot: bot, waiting: queue, agent: human}
        messages:
          table: helpdesk.ticket_events
          columns:
            seq: event_no
            conversation_id: ticket_id
            sender_type: author_role
            content:   body
            created_at: created_at
          sender_values:
            customer: [end_user, customer]
            agent: agent
          time: epoch

        """, path: "h.yaml")
        let at = m.locations.mapValues { "\($0.line):\($0.column)" }
        #expect(at == [
            "mapping": "1:10", "intake": "2:9",
            "conversations": "3:1", "conversations.table": "4:10",
            "conversations.columns": "5:3", "conversations.columns.id": "6:9", "conversations.columns.owner": "7:12",
            "conversations.owner_values": "8:3", "conversations.owner_values.bot": "8:23",
            "conversations.owner_values.waiting": "8:37", "conversations.owner_values.agent": "8:51",
            "messages": "9:1", "messages.table": "10:10", "messages.columns": "11:3",
            "messages.columns.seq": "12:10", "messages.columns.conversation_id": "13:22",
            "messages.columns.sender_type": "14:18", "messages.columns.content": "15:16",
            "messages.columns.created_at": "16:17",
            "messages.sender_values": "17:3", "messages.sender_values.customer": "18:15",
            "messages.sender_values.agent": "19:12", "messages.time": "20:9",
        ])
        #expect(m.locations.values.allSatisfy { $0.file == "h.yaml" })

        // The adapter's diagnostics: at the setting, else at the nearest section written, else the file.
        #expect(m.diagnostic("missing-column", "helpdesk.ticket_events has no column 'body'", at: "messages.columns.content").headline
                == "h.yaml:15:16: error: [missing-column] helpdesk.ticket_events has no column 'body'")
        #expect(m.diagnostic("x", "y", at: "messages.sender_values.bot").headline == "h.yaml:17:3: error: [x] y")
        #expect(m.diagnostic("x", "y", at: "messages.kind_values.close", severity: .warning).headline == "h.yaml:9:1: warning: [x] y")
        #expect(m.diagnostic("x", "y", at: "usher_schema").headline == "h.yaml:1:1: error: [x] y")
    }

    /// `messages.write`: each kind of value, quoted scalars always text; the bot and its notices
    /// may share one sender value (both are Usher's writes, never read as inbound).
    @Test func writtenValues() throws {
        let m = try mapping(minimal.replacingOccurrences(of: "sender_type: role, ", with: "sender_type: role, sender_id: who, ") + """
          sender_values: {customer: Contact, agent: User, bot: AgentBot, system: AgentBot}
          write:
            account_id: conversation.account_id
            inbox_id: message.inbox_id
            message_type: 1
            private: false
            content_type: default
            sender_id: 7
            updated_at: now()
            source_id: null
            external: ~
            label: 'now()'
            note: "default"

        """)
        #expect(m.messages.write == [
            .init("account_id", .conversation("account_id")), .init("inbox_id", .message("inbox_id")), .init("message_type", .constant("1")),
            .init("private", .constant("false")), .init("content_type", .columnDefault), .init("sender_id", .constant("7")),
            .init("updated_at", .now), .init("source_id", .null), .init("external", .null), .init("label", .constant("now()")),
            .init("note", .constant("default")),
        ])
        #expect(m.messages.senderValues.bot == "AgentBot" && m.messages.senderValues.system == "AgentBot")
        #expect(m.location(of: "messages.write.inbox_id").map { "\($0.line):\($0.column)" } == "11:15")
    }

    /// `conversations.ownership`: conditions over the row, kept as written, their characters
    /// located; the handoff values.
    @Test func ownership() throws {
        let m = try mapping(minimal.replacingOccurrences(of: "  columns: {id: ticket_id}\n", with: """
          columns: {id: ticket_id}
          ownership:
            agent: "status = 3 OR (status = 0 AND assignee_id IS NOT NULL)"
            waiting: status = 0 AND assignee_id IS NULL
            handoff: {status: 0, team_id: 2, waiting_since: now()}

        """))
        let o = try #require(m.conversations.ownership)
        #expect(o.agent?.text == "status = 3 OR (status = 0 AND assignee_id IS NOT NULL)")
        #expect(o.waiting?.text == "status = 0 AND assignee_id IS NULL")
        #expect(o.handoff == [.init("status", .constant("0")), .init("team_id", .constant("2")), .init("waiting_since", .now)])
        // The database's errors point inside a condition: offset 30 is 'assignee_id'.
        #expect(m.diagnostic("invalid-condition", "x", at: "conversations.ownership.agent", offset: 30).headline
                == "m.yaml:6:43: error: [invalid-condition] x")
        #expect(m.diagnostic("invalid-condition", "x", at: "conversations.ownership.waiting", offset: 15).headline
                == "m.yaml:7:29: error: [invalid-condition] x")
    }

    /// A condition's columns are qualified by the row's alias where Usher splices it in; names
    /// of functions and types, qualified names, text and quoted names of no column stay.
    @Test func conditionsQualifyTheirColumns() throws {
        let e = try SQLExpression(#"lower(status)::text = 'open' AND "Assignee" IS NULL AND x.status = 1 AND CAST(n AS text) <> 'n' OR private"#)
        let columns: Set<String> = ["status", "Assignee", "n", "text", "lower", "private"]
        #expect(e.sql(alias: "c", columns: columns).sql
                == #"lower(c."status")::text = 'open' AND c."Assignee" IS NULL AND x.status = 1 AND CAST(c."n" AS text) <> 'n' OR c."private""#)
        #expect(e.sql(alias: nil, columns: columns).sql == e.text)
        let (sql, source) = try SQLExpression("private = false").sql(alias: "m", columns: ["private"])
        #expect(sql == #"m."private" = false"#)
        #expect(source.count == sql.unicodeScalars.count && source[0] == 0 && source[sql.count - 1] == 14)
    }

    @Test func warningsStillLoad() throws {
        let (m, d) = SQLMapping.parse(path: "m.yaml", text: minimal + "  kind_values: {close: resolved}\n")
        #expect(d.map(\.headline) == [
            "m.yaml:8:3: warning: [unused-kind-values] 'kind_values' has no effect: 'messages.columns' maps no 'kind' column; map one, like 'kind: event_type', or remove 'kind_values'",
        ])
        #expect(m?.messages.kindValues.close == "resolved")
    }

    @Test func recognisesMappingFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-mapping-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func write(_ name: String, _ text: String) throws -> String {
            let url = dir.appendingPathComponent(name)
            try Data(text.utf8).write(to: url)
            return url.path
        }
        #expect(SQLMapping.isMappingFile(path: try write("ok.yaml", minimal)))
        #expect(SQLMapping.isMappingFile(path: try write("flow.yaml", "{mapping: 1, conversations: {}}\n")))
        #expect(SQLMapping.isMappingFile(path: try write("broken.yaml", "mapping: 1\nconversations: [\n")))
        #expect(!SQLMapping.isMappingFile(path: try write("rules.yaml", "version: 1\nrules: []\n")))
        #expect(!SQLMapping.isMappingFile(path: try write("nested.yaml", "version: 1\nlists:\n  mapping: [a]\n")))
        #expect(!SQLMapping.isMappingFile(path: dir.appendingPathComponent("missing.yaml").path))

        let (m, d) = SQLMapping.load(path: dir.appendingPathComponent("missing.yaml").path)
        #expect(m == nil)
        #expect(d.map(\.code) == ["unreadable-file"])
    }
}
