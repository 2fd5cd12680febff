import Testing
import UsherDiagnostics
import UsherSQLMapping

@Suite("The native mapping")
struct NativeMappingTests {
    /// DESIGN.md §7's schema, column for column.
    @Test func namesTheNativeSchema() {
        let n = SQLMapping.native
        #expect(n.conversations == SQLMapping.Conversations(
            table: "conversations", id: "id", customerID: "customer_id", channel: "channel", locale: "locale",
            owner: "owner", assignedToAgent: "assigned_to_agent", customerMessageCount: "customer_message_count",
            tags: "tags", metadata: "metadata", createdAt: "created_at", updatedAt: "updated_at",
            ownerValues: .init(bot: "bot", waiting: "waiting", agent: "agent")))
        #expect(n.messages == SQLMapping.Messages(
            table: "messages", seq: "seq", id: "id", conversationID: "conversation_id", kind: "kind",
            senderType: "sender_type", senderID: "sender_id", senderName: "sender_name", content: "content",
            createdAt: "created_at", ruleID: "rule_id", idempotencyKey: "idempotency_key", quickReplies: "quick_replies",
            senderValues: .init(customer: ["customer"], agent: ["agent"], bot: "bot", system: "system"),
            kindValues: .init(message: "message", close: "close"), time: .timestamptz))
        #expect(n.usherSchema == "usher")
        #expect(n.intake == .trigger)
        #expect(n.pollInterval == .seconds(1))
        #expect(n.path == nil)
        #expect(n.locations.isEmpty)
    }

    @Test func listsEveryColumn() {
        let columns = SQLMapping.native.mappedColumns
        #expect(columns.count == 23)
        #expect(columns.first == .init(keyPath: "conversations.columns.id", table: "conversations", column: "id"))
        #expect(columns.last == .init(keyPath: "messages.columns.quick_replies", table: "messages", column: "quick_replies"))
        #expect(columns.filter { $0.table == "messages" }.map(\.column) == [
            "seq", "id", "conversation_id", "kind", "sender_type", "sender_id", "sender_name", "content",
            "created_at", "rule_id", "idempotency_key", "quick_replies",
        ])
    }

    /// The native mapping comes from no file: its diagnostics have no location.
    @Test func diagnosticsHaveNoLocation() {
        let d = SQLMapping.native.diagnostic("missing-column", "no column 'seq' in messages", at: "messages.columns.seq")
        #expect(d.headline == "error: [missing-column] no column 'seq' in messages")
    }

    /// Written out as a file, the native mapping reads back as itself (but for where it came from).
    @Test func nativeAsAFile() throws {
        let text = """
        mapping: 1
        conversations:
          table: conversations
          columns: {id: id, customer_id: customer_id, channel: channel, locale: locale, owner: owner,
                    assigned_to_agent: assigned_to_agent, customer_message_count: customer_message_count,
                    tags: tags, metadata: metadata, created_at: created_at, updated_at: updated_at}
        messages:
          table: messages
          columns: {seq: seq, id: id, conversation_id: conversation_id, kind: kind, sender_type: sender_type,
                    sender_id: sender_id, sender_name: sender_name, content: content, created_at: created_at,
                    rule_id: rule_id, idempotency_key: idempotency_key, quick_replies: quick_replies}

        """
        let (m, d) = SQLMapping.parse(path: "native.yaml", text: text)
        #expect(d.isEmpty, "\(d.map(\.headline))")
        var mapping = try #require(m)
        mapping.path = nil
        mapping.locations = [:]
        #expect(mapping == .native)
    }
}
