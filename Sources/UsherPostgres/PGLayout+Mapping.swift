public import UsherDiagnostics
import UsherSQLMapping
import UsherStore

extension PGLayout {
    /// The layout a mapping file describes; `SQLMapping.native` gives the native schema.
    init(_ m: SQLMapping) {
        func q(_ s: String) -> String { PGText.identifier(s) }
        func q(_ s: String?) -> String? { s.map(PGText.identifier) }
        let c = m.conversations, g = m.messages
        // The native tables, whatever the intake or the schema of Usher's own tables.
        let isNative = m.conversations == SQLMapping.native.conversations && m.messages == SQLMapping.native.messages
        self.init(
            conversations: q(c.table), cID: q(c.id), cCustomerID: q(c.customerID), cChannel: q(c.channel),
            cLocale: q(c.locale), cOwner: q(c.owner), cAssigned: q(c.assignedToAgent), cCount: q(c.customerMessageCount),
            cTags: q(c.tags), cMetadata: q(c.metadata), cCreatedAt: q(c.createdAt), cUpdatedAt: q(c.updatedAt),
            ownerValues: ["bot": c.ownerValues.bot, "waiting": c.ownerValues.waiting, "agent": c.ownerValues.agent],
            conversationTypes: isNative ? PGLayout.nativeConversationTypes : [:],
            messages: q(g.table), mSeq: q(g.seq), mID: q(g.id), mConversation: q(g.conversationID), mKind: q(g.kind),
            mSender: q(g.senderType), mSenderID: q(g.senderID), mSenderName: q(g.senderName), mContent: q(g.content),
            mCreatedAt: q(g.createdAt), mRuleID: q(g.ruleID), mKey: q(g.idempotencyKey),
            customerValues: g.senderValues.customer, agentValues: g.senderValues.agent,
            botValue: g.senderValues.bot, systemValue: g.senderValues.system,
            kindMessage: g.kindValues.message, kindClose: g.kindValues.close,
            time: g.time,
            usher: q(m.usherSchema), trigger: m.intake == .trigger, pollInterval: m.pollInterval, isNative: isNative)
    }

    /// Checks a mapping against the database: every mapped table and column exists. Learns the
    /// conversation columns' types (parameters are cast to them). Problems are diagnostics at
    /// the line of the mapping file that names the table or column.
    static func resolve(_ m: SQLMapping, _ db: PGConnection) throws -> PGLayout {
        var layout = PGLayout(m)
        if layout.isNative { return layout }
        var problems: [Diagnostic] = []
        var columnsOf: [String: [String: String]] = [:]
        for (key, table) in [("conversations.table", m.conversations.table), ("messages.table", m.messages.table)] {
            let r = try db.execute("""
                SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid)
                FROM pg_attribute AS a LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
                """, [PGText.identifier(table)])
            if r.rows == 0 {
                problems.append(m.diagnostic("missing-table", "the database has no table '\(table)' (or this role cannot see it); "
                                             + "check the name and the schema, and that the role has USAGE on the schema", at: key))
                continue
            }
            columnsOf[table] = Dictionary((0..<r.rows).map { (r.string($0, 0), r.string($0, 1)) }, uniquingKeysWith: { a, _ in a })
            if table == m.conversations.table {
                for i in 0..<r.rows { if let d = r.text(i, 2) { layout.conversationDefaults[PGText.identifier(r.string(i, 0))] = d } }
            }
        }
        for column in m.mappedColumns {
            guard let columns = columnsOf[column.table] else { continue }
            if let type = columns[column.column] {
                if column.table == m.conversations.table { layout.conversationTypes[PGText.identifier(column.column)] = type }
            } else {
                let known = columns.keys.sorted()
                let hint = Suggestion.closest(to: column.column, in: known).map { "; did you mean '\($0)'?" }
                    ?? "; it has: \(known.joined(separator: ", "))"
                problems.append(m.diagnostic("missing-column", "table '\(column.table)' has no column '\(column.column)'\(hint)",
                                             at: column.keyPath))
            }
        }
        // The order Usher reads in, compared with int8 parameters: a whole number.
        if let type = columnsOf[m.messages.table]?[m.messages.seq], !["smallint", "integer", "bigint"].contains(type) {
            problems.append(m.diagnostic("seq-not-integer", "column '\(m.messages.seq)' of '\(m.messages.table)' is \(type); "
                                         + "seq needs an increasing integer column (an identity or bigserial column)",
                                         at: "messages.columns.seq"))
        }
        if !problems.isEmpty { throw PostgresStore.MappingMismatch(diagnostics: problems) }
        return layout
    }
}

extension PostgresStore {
    /// The mapping file names tables or columns the database does not have.
    public struct MappingMismatch: Error, CustomStringConvertible {
        public var diagnostics: [Diagnostic]
        public var description: String { diagnostics.map(\.headline).joined(separator: "\n") }
    }
}
