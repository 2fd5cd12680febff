import UsherSQLMapping

/// Where the conversations and messages live and how their values read: the native schema of
/// DESIGN.md §7, or a helpdesk's own tables named by a mapping file. Every name is kept quoted,
/// ready to splice into SQL; every value from the mapping file is a quoted literal.
struct PGLayout: Sendable {
    typealias Time = SQLMapping.TimeFormat

    /// `"public"."conversations"`.
    var conversations: String
    var cID: String
    var cCustomerID: String?
    var cChannel: String?
    var cLocale: String?
    var cOwner: String?
    var cAssigned: String?
    var cCount: String?
    var cTags: String?
    var cMetadata: String?
    var cCreatedAt: String?
    var cUpdatedAt: String?
    /// Owner values as the column holds them, by `Owner.rawValue`.
    var ownerValues: [String: String]
    /// Who owns a conversation by the application's own columns (`SQLMapping.Ownership`):
    /// conditions over the conversation's row; both nil: Usher's state says.
    var agentOwned: SQLExpression?
    var waitingOwned: SQLExpression?
    /// Written in the conversation's row when it leaves the bot, by quoted column.
    var handoffWrites: [(column: String, value: SQLMapping.WrittenValue)] = []
    /// The conversations table's columns as the catalogue names them: what the conditions'
    /// bare names are qualified against.
    var conversationColumns: Set<String> = []
    /// The conversation columns, by quoted name, as the catalogue describes them (read at start
    /// for a mapping): parameters travel as text and are cast to their types.
    var conversationTypes: [String: PGColumn] = [:]
    /// The conversation columns' defaults (`pg_attrdef`), by quoted column, where a mapped table
    /// has them: a value Usher does not know (a channel not given) falls back to it instead of
    /// writing NULL over it (a NOT NULL column with a default refuses an explicit NULL).
    var conversationDefaults: [String: String] = [:]

    var messages: String
    var mSeq: String
    /// nil: the seq is the id.
    var mID: String?
    var mConversation: String
    var mKind: String?
    var mSender: String
    var mSenderID: String?
    var mSenderName: String?
    var mContent: String
    var mCreatedAt: String
    var mRuleID: String?
    var mKey: String?
    /// A reply's quick replies, as JSON (`QuickReply.write`); nil: not kept (a mapping that
    /// names no column for them, or a native table Usher's role could not add it to).
    var mQuickReplies: String? = nil
    /// Sender values, as the column holds them.
    var customerValues: [String]
    var agentValues: [String]
    var botValue: String
    var systemValue: String
    var kindMessage: String
    var kindClose: String
    var time: Time
    /// What the replies and notices carry beyond the mapped columns, or instead of Usher's value
    /// in one (`SQLMapping.Messages.write`): by quoted column, in file order.
    var messageWrites: [(column: String, value: SQLMapping.WrittenValue)] = []
    /// Which rows are messages at all (`SQLMapping.Messages.filter`, `where`): a condition over
    /// the messages' row.
    var messageFilter: SQLExpression?
    /// The messages table's columns as the catalogue names them: what the filter's bare names
    /// are qualified against.
    var messageColumnNames: Set<String> = []
    /// The messages table's columns, by quoted name, as the catalogue describes them (read at
    /// start for a mapping; empty for the native schema, whose columns are text and timestamptz).
    var messageTypes: [String: PGColumn] = [:]

    /// Usher's own tables: `"usher"`.
    var usher: String
    /// Install a NOTIFY trigger on the messages table (else poll).
    var trigger: Bool
    var pollInterval: Duration
    /// The native schema: Usher creates (and owns) conversations and messages too.
    var isNative: Bool

    /// The native schema (DESIGN.md §7): the layout of `SQLMapping.native`.
    static let native = PGLayout(SQLMapping.native)

    /// The native conversation columns' types, known without asking the catalog.
    static let nativeConversationTypes: [String: PGColumn] = [
        q("id"): PGColumn(type: "text", category: "S"), q("customer_id"): PGColumn(type: "text", category: "S"),
        q("owner"): PGColumn(type: "text", category: "S"), q("assigned_to_agent"): PGColumn(type: "boolean", category: "B"),
        q("customer_message_count"): PGColumn(type: "integer", category: "N"), q("tags"): PGColumn(type: "jsonb", category: "U"),
        q("metadata"): PGColumn(type: "jsonb", category: "U"),
    ]

    private static func q(_ s: String) -> String { PGText.identifier(s) }

    // MARK: - SQL fragments

    /// `m.seq` etc.: a column of the messages table under alias `m`.
    func m(_ column: String) -> String { "m.\(column)" }

    /// A time column read as seconds since 1970 (float8).
    func readTime(_ expr: String) -> String {
        switch time {
        case .timestamptz: "extract(epoch FROM \(expr))::float8"
        case .epoch: "(\(expr))::float8"
        case .epochMillis: "((\(expr))::float8 / 1000.0)"
        }
    }

    /// A parameter of seconds since 1970 written into a time column (`column`: its type, when
    /// the catalogue gave it): a `timestamp without time zone` gets the time in UTC, not in the
    /// session's time zone.
    func writeTime(_ param: String, _ column: PGColumn? = nil) -> String {
        switch time {
        case .timestamptz: column?.isTimestamp == true
            ? "(to_timestamp((\(param))::float8) AT TIME ZONE 'UTC')" : "to_timestamp((\(param))::float8)"
        case .epoch: "(\(param))::float8"
        case .epochMillis: "round((\(param))::float8 * 1000)"
        }
    }

    private func list(_ values: [String]) -> String { values.map(PGText.literal).joined(separator: ", ") }

    /// The message id as text.
    var messageID: String { "\(m(mID ?? mSeq))::text" }

    /// Customer and agent messages and close events: what a bot takes in.
    var inbound: String { inbound("m") }

    /// `inbound` over the columns of the messages row under `alias` (`m`, `NEW` in the trigger),
    /// or bare (nil: the predicate of the index `messages_inbound`, which must read as the
    /// queries' for the planner to see that they fall within it). With the mapping's row
    /// filter (`where`), only rows it keeps.
    func inbound(_ alias: String?) -> String {
        func column(_ name: String) -> String { alias.map { "\($0).\(name)" } ?? name }
        var s = "\(column(mSender))::text IN (\(list(customerValues + agentValues)))"
        if let k = mKind { s = "(\(s) OR \(column(k))::text = \(PGText.literal(kindClose)))" }
        return s + filter(alias)
    }

    /// ` AND (the mapping's row filter)` over the messages row under `alias`; "" without one.
    func filter(_ alias: String?) -> String {
        guard let messageFilter else { return "" }
        return " AND (\(messageFilter.sql(alias: alias, columns: messageColumnNames).sql))"
    }

    /// The sender role as `customer|agent|bot|system`.
    var role: String {
        "CASE WHEN \(m(mSender))::text IN (\(list(customerValues))) THEN 'customer' "
            + "WHEN \(m(mSender))::text IN (\(list(agentValues))) THEN 'agent' "
            + "WHEN \(m(mSender))::text = \(PGText.literal(systemValue)) THEN 'system' ELSE 'bot' END"
    }

    /// An agent's message: a row the filter leaves out (a private note) takes nothing over.
    var isAgent: String { "\(m(mSender))::text IN (\(list(agentValues)))" + filter("m") }

    var isCustomer: String { "\(m(mSender))::text IN (\(list(customerValues)))" }

    /// `message` or `close`.
    var kind: String {
        guard let k = mKind else { return "'message'" }
        return "CASE WHEN \(m(k))::text = \(PGText.literal(kindClose)) THEN 'close' ELSE 'message' END"
    }

    /// The columns `PostgresStore.message(_:_:)` reads, in order, from `m` joined with `c`.
    var messageColumns: String {
        func opt(_ c: String?, _ cast: String = "::text") -> String { c.map { "m.\($0)\(cast)" } ?? "NULL" }
        func conv(_ c: String?) -> String { c.map { "c.\($0)::text" } ?? "NULL" }
        return [
            m(mSeq), messageID, "\(m(mConversation))::text", kind, role, opt(mSenderID), opt(mSenderName),
            "\(m(mContent))::text", readTime(m(mCreatedAt)), opt(mRuleID), conv(cChannel), conv(cLocale),
        ].joined(separator: ", ")
    }

    /// `messageColumns`, then the quick replies (NULL where they are not kept): what a
    /// transcript reads. The reads of inbound messages and the NOTIFY payload leave them out:
    /// an inbound message has none.
    var transcriptColumns: String { messageColumns + ", " + (mQuickReplies.map { "m.\($0)::text" } ?? "NULL") }

    /// The native messages' quick replies column, and its type (the others are text and
    /// timestamptz, which need no cast).
    static let nativeMessageTypes: [String: PGColumn] = [q("quick_replies"): PGColumn(type: "jsonb", category: "U")]

    /// `FROM messages m LEFT JOIN conversations c`.
    var messagesJoined: String { "\(messages) AS m LEFT JOIN \(conversations) AS c ON c.\(cID) = m.\(mConversation)" }

    /// `expr` (text) as a value of the conversations column `column` (`PGColumn.cast`; as it is
    /// when the type is not known).
    func cast(_ expr: String, to column: String) -> String { conversationTypes[column]?.cast(expr) ?? expr }

    /// `expr` (text) as a value of the messages column `column`.
    func castMessage(_ expr: String, to column: String) -> String { messageTypes[column]?.cast(expr) ?? expr }

    /// Whether the application's columns say who owns a conversation (`agentOwned`, `waitingOwned`).
    var readsOwnership: Bool { agentOwned != nil || waitingOwned != nil }

    /// Who owns the conversation whose row is under `alias`, by the application's columns:
    /// `'agent'`, `'waiting'` or `'bot'` (a condition that is NULL is false; no row: `'bot'`).
    func owner(_ alias: String) -> String {
        var s = "CASE"
        for (condition, owner) in [(agentOwned, "agent"), (waitingOwned, "waiting")] {
            guard let condition else { continue }
            s += " WHEN coalesce((\(condition.sql(alias: alias, columns: conversationColumns).sql)), false) THEN '\(owner)'"
        }
        return s + " ELSE 'bot' END"
    }

    /// Whether a conversation whose row says `row` (`owner(_:)`) is still as a commit decided
    /// from it, expecting `expected` (the owner its state was presented with,
    /// `PostgresStore.presented`): the bot's only while the row says bot; waiting only while
    /// it waits; a person's while the row says a person has it or waits for one.
    static func stillOwned(_ expected: String, _ row: String) -> String {
        "CASE \(expected) WHEN 'bot' THEN \(row) = 'bot' WHEN 'waiting' THEN \(row) = 'waiting' ELSE \(row) <> 'bot' END"
    }

    /// A conversation id parameter (text) as the conversations table's id type.
    func conversationID(_ expr: String) -> String { cast(expr, to: cID) }

    /// A conversation id parameter (text) as the messages' conversation column's type: what an
    /// insert into the messages table writes, and what it is compared with there.
    func messageConversationID(_ expr: String) -> String { castMessage(expr, to: mConversation) }

    func table(_ name: String) -> String { "\(usher).\(PGText.identifier(name))" }

    /// `value` as SQL for the column `column` (`PGColumn`; nil when the type is not known), with
    /// the conversation's row under `c` and the inbound message's under `im`; nil for the
    /// column's default (an insert leaves the column out).
    func written(_ value: SQLMapping.WrittenValue, into column: PGColumn?) -> String? {
        func cast(_ expr: String) -> String { column?.cast(expr) ?? expr }
        switch value {
        case let .constant(text): return cast(PGText.literal(text))
        case .null: return "NULL"
        case .columnDefault: return nil
        case .now: return now(column)
        case let .conversation(name): return cast("c.\(PGText.identifier(name))")
        case let .message(name): return cast("im.\(PGText.identifier(name))")
        }
    }

    /// The time of the write in `column`: a timestamp (without a time zone: in UTC), a date, or
    /// a number in the mapping's time format.
    func now(_ column: PGColumn?) -> String {
        guard let column else { return "now()" }
        if column.isTimestamp { return "(now() AT TIME ZONE 'UTC')" }
        if column.type == "date" { return "current_date" }
        if column.isNumeric { return "(\(time == .epochMillis ? "floor(extract(epoch FROM now()) * 1000)" : "floor(extract(epoch FROM now()))"))::\(column.type)" }
        return "now()"
    }

    /// Whether a written value reads the inbound message's row (`message.x`): the reply's insert
    /// then takes each reply's inbound seq.
    var writesFromInbound: Bool { messageWrites.contains { if case .message = $0.value { true } else { false } } }

    /// Whether a written value reads the conversation's row (`conversation.x`).
    var writesFromConversation: Bool { messageWrites.contains { if case .conversation = $0.value { true } else { false } } }
}
