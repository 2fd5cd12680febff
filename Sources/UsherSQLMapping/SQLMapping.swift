public import UsherDiagnostics

/// Where a SQL store's chat lives: the helpdesk's tables and columns, and the values it uses for
/// sender types, message kinds and ownership. The SQL adapters generate their SQL from it.
///
/// `native` is DESIGN.md §7's own schema; a mapping file (docs/mapping.md) points Usher at an
/// existing helpdesk's tables instead. Names are plain SQL identifiers (letters, digits and `_`,
/// not starting with a digit, at most 63 bytes), used exactly as written; a table may be
/// `schema.table`.
public struct SQLMapping: Sendable, Hashable {
    /// How message and conversation times are stored.
    public enum TimeFormat: String, Sendable, Hashable, CaseIterable {
        /// `timestamptz` (or `timestamp`, read as UTC).
        case timestamptz
        /// Whole seconds since 1970-01-01 UTC, in an integer column.
        case epoch
        /// Milliseconds since 1970-01-01 UTC, in a bigint column.
        case epochMillis = "epoch_ms"
    }

    /// How the adapter learns of new messages.
    public enum Intake: String, Sendable, Hashable, CaseIterable {
        /// A NOTIFY trigger that the adapter installs on the messages table.
        case trigger
        /// Polling every `pollInterval`; the helpdesk's tables' DDL is never touched.
        case poll
    }

    /// The values the conversations' owner column holds.
    public struct OwnerValues: Sendable, Hashable {
        public var bot: String
        public var waiting: String
        public var agent: String

        public init(bot: String = "bot", waiting: String = "waiting", agent: String = "agent") {
            self.bot = bot
            self.waiting = waiting
            self.agent = agent
        }
    }

    /// The values the messages' sender-type column holds.
    public struct SenderValues: Sendable, Hashable {
        /// Every value meaning "customer" (non-empty).
        public var customer: [String]
        /// Every value meaning "agent" (non-empty).
        public var agent: [String]
        /// Written for bot replies (also read as bot).
        public var bot: String
        /// Written for system notices.
        public var system: String

        public init(customer: [String] = ["customer"], agent: [String] = ["agent"],
                    bot: String = "bot", system: String = "system") {
            self.customer = customer
            self.agent = agent
            self.bot = bot
            self.system = system
        }
    }

    /// The values the messages' kind column holds; only meaningful when `Messages.kind` is set.
    public struct KindValues: Sendable, Hashable {
        public var message: String
        public var close: String

        public init(message: String = "message", close: String = "close") {
            self.message = message
            self.close = close
        }
    }

    /// A value Usher writes into a column of the application's table beside the mapped ones
    /// (`messages.write`), or on a handoff (`conversations.ownership.handoff`). The store casts
    /// it to the column's type and checks it against the column when it opens.
    public enum WrittenValue: Sendable, Hashable {
        /// Text cast to the column's type: `0`, `false`, `Support` (a quoted scalar is always
        /// a constant: `'now()'` is text).
        case constant(String)
        /// SQL NULL (`null`, `~`): only in a column that takes NULL.
        case null
        /// The column's default (`default`): the insert leaves the column out.
        case columnDefault
        /// The time of the write (`now()`): a timestamp column, or a number column in the
        /// mapping's `time` format.
        case now
        /// A column of the conversation's row (`conversation.account_id`).
        case conversation(String)
        /// A column of the inbound message's row, the one the reply answers
        /// (`message.inbox_id`).
        case message(String)
    }

    /// A column and the value Usher writes there.
    public struct WrittenColumn: Sendable, Hashable {
        public var column: String
        public var value: WrittenValue

        public init(_ column: String, _ value: WrittenValue) {
            self.column = column
            self.value = value
        }
    }

    /// Who owns a conversation, read from the application's own columns instead of a column
    /// of Usher's (`conversations.ownership`): conditions over the conversation's row, and what
    /// Usher writes there when the conversation leaves the bot. Usher never answers in, nor
    /// writes to, a conversation these say a person has.
    public struct Ownership: Sendable, Hashable {
        /// A person holds the conversation (`status = 0 AND assignee_id IS NOT NULL`): the bot is silent.
        public var agent: SQLExpression?
        /// Handed to the people, nobody holds it yet (`status = 0 AND assignee_id IS NULL`): the
        /// bot's `while_waiting` rules speak there when Usher handed it off itself.
        public var waiting: SQLExpression?
        /// Written when the conversation leaves the bot — a handoff, or an agent's message —
        /// so that the application's columns say so too (`status: 0`, `team_id: 3`).
        public var handoff: [WrittenColumn]

        public init(agent: SQLExpression? = nil, waiting: SQLExpression? = nil, handoff: [WrittenColumn] = []) {
            self.agent = agent
            self.waiting = waiting
            self.handoff = handoff
        }
    }

    /// The conversations table. Optional columns are `nil` when the helpdesk has no such column:
    /// Usher then neither reads nor writes it there.
    public struct Conversations: Sendable, Hashable {
        /// `tickets` or `helpdesk.tickets`.
        public var table: String
        public var id: String
        public var customerID: String?
        public var channel: String?
        public var locale: String?
        /// Where Usher writes who owns the conversation, as one of `ownerValues`.
        public var owner: String?
        public var assignedToAgent: String?
        public var customerMessageCount: String?
        public var tags: String?
        public var metadata: String?
        public var createdAt: String?
        public var updatedAt: String?
        public var ownerValues: OwnerValues
        /// Who owns the conversation, by the application's own columns; nil: Usher's state says
        /// (and `owner`, when mapped, is written with it).
        public var ownership: Ownership?

        public init(table: String, id: String, customerID: String? = nil, channel: String? = nil,
                    locale: String? = nil, owner: String? = nil, assignedToAgent: String? = nil,
                    customerMessageCount: String? = nil, tags: String? = nil, metadata: String? = nil,
                    createdAt: String? = nil, updatedAt: String? = nil, ownerValues: OwnerValues = .init(),
                    ownership: Ownership? = nil) {
            self.table = table
            self.id = id
            self.customerID = customerID
            self.channel = channel
            self.locale = locale
            self.owner = owner
            self.assignedToAgent = assignedToAgent
            self.customerMessageCount = customerMessageCount
            self.tags = tags
            self.metadata = metadata
            self.createdAt = createdAt
            self.updatedAt = updatedAt
            self.ownerValues = ownerValues
            self.ownership = ownership
        }
    }

    /// The messages table.
    public struct Messages: Sendable, Hashable {
        public var table: String
        /// An increasing integer column (identity or bigserial, CACHE 1): the intake order.
        public var seq: String
        /// `nil`: the seq column is the message id.
        public var id: String?
        public var conversationID: String
        /// `nil`: no close events.
        public var kind: String?
        public var senderType: String
        public var senderID: String?
        public var senderName: String?
        public var content: String
        public var createdAt: String
        public var ruleID: String?
        public var idempotencyKey: String?
        /// Where a reply's quick replies go, as a JSON array (`[{"title", "url"}]`); `nil`: they
        /// are not kept.
        public var quickReplies: String?
        public var senderValues: SenderValues
        /// Only meaningful when `kind` is set.
        public var kindValues: KindValues
        /// How `createdAt` (and the conversations' times) are stored.
        public var time: TimeFormat
        /// What Usher's replies and notices carry in other columns of the table (NOT NULL
        /// columns the application fills itself: `account_id: conversation.account_id`,
        /// `message_type: 1`), or in a mapped column instead of Usher's own value
        /// (`sender_id: 1`, the application's id for the bot). In file order.
        public var write: [WrittenColumn]
        /// Which rows are messages at all (`where`: `private = false AND message_type IN (0, 1)`):
        /// a row it leaves out is neither read nor counted as an agent's takeover.
        public var filter: SQLExpression?

        public init(table: String, seq: String, id: String? = nil, conversationID: String,
                    kind: String? = nil, senderType: String, senderID: String? = nil,
                    senderName: String? = nil, content: String, createdAt: String,
                    ruleID: String? = nil, idempotencyKey: String? = nil, quickReplies: String? = nil,
                    senderValues: SenderValues = .init(), kindValues: KindValues = .init(),
                    time: TimeFormat = .timestamptz, write: [WrittenColumn] = [], filter: SQLExpression? = nil) {
            self.table = table
            self.seq = seq
            self.id = id
            self.conversationID = conversationID
            self.kind = kind
            self.senderType = senderType
            self.senderID = senderID
            self.senderName = senderName
            self.content = content
            self.createdAt = createdAt
            self.ruleID = ruleID
            self.idempotencyKey = idempotencyKey
            self.quickReplies = quickReplies
            self.senderValues = senderValues
            self.kindValues = kindValues
            self.time = time
            self.write = write
            self.filter = filter
        }
    }

    public var conversations: Conversations
    public var messages: Messages
    /// The schema of Usher's own tables (state, notifications, the intake cursor).
    public var usherSchema: String
    public var intake: Intake
    public var pollInterval: Duration
    /// The file it came from; `nil` for `native`.
    public var path: String?
    /// Where each setting was written, by dotted key path ("messages.columns.content",
    /// "conversations.table", "messages.sender_values.agent"), so that the adapter can report a
    /// problem it finds later in the database (a missing column) at the right line:col.
    ///
    /// A value's key path locates the value; a section's ("conversations", "messages.columns",
    /// "messages.sender_values") locates its key. Settings left at their defaults are absent.
    public var locations: [String: SourceLocation]
    /// Where each character of each condition was written, by key path
    /// ("conversations.ownership.agent", "messages.where"): the database's errors point inside it.
    public var expressionLocations: [String: [SourceLocation]] = [:]

    public init(conversations: Conversations, messages: Messages, usherSchema: String = "usher",
                intake: Intake = .trigger, pollInterval: Duration = .seconds(1), path: String? = nil,
                locations: [String: SourceLocation] = [:]) {
        self.conversations = conversations
        self.messages = messages
        self.usherSchema = usherSchema
        self.intake = intake
        self.pollInterval = pollInterval
        self.path = path
        self.locations = locations
    }

    /// DESIGN.md §7's native schema: conversations(id, customer_id, channel, locale, owner,
    /// assigned_to_agent, customer_message_count, tags, metadata, created_at, updated_at),
    /// messages(seq, id, conversation_id, kind, sender_type, sender_id, sender_name, content,
    /// created_at, rule_id, idempotency_key, quick_replies), time timestamptz, usherSchema "usher",
    /// intake trigger.
    public static let native = SQLMapping(
        conversations: Conversations(
            table: "conversations", id: "id", customerID: "customer_id", channel: "channel", locale: "locale",
            owner: "owner", assignedToAgent: "assigned_to_agent", customerMessageCount: "customer_message_count",
            tags: "tags", metadata: "metadata", createdAt: "created_at", updatedAt: "updated_at"),
        messages: Messages(
            table: "messages", seq: "seq", id: "id", conversationID: "conversation_id", kind: "kind",
            senderType: "sender_type", senderID: "sender_id", senderName: "sender_name", content: "content",
            createdAt: "created_at", ruleID: "rule_id", idempotencyKey: "idempotency_key", quickReplies: "quick_replies"))

    /// A diagnostic at a setting's location — for the adapter. A setting left at its default
    /// falls back to the nearest section written ("messages.columns.rule_id" →
    /// "messages.columns" → "messages"), then to the file (`path:1:1`); `native` has no location.
    public func diagnostic(_ code: String, _ message: String, at keyPath: String,
                           severity: Diagnostic.Severity = .error) -> Diagnostic {
        Diagnostic(severity, code, message, at: location(of: keyPath))
    }

    /// A diagnostic at a character of the condition at `keyPath` (`offset` in Unicode scalars
    /// from its start), else at the condition.
    public func diagnostic(_ code: String, _ message: String, at keyPath: String, offset: Int) -> Diagnostic {
        let inside = expressionLocations[keyPath].flatMap { $0.indices.contains(offset) ? $0[offset] : nil }
        return Diagnostic(.error, code, message, at: inside ?? location(of: keyPath))
    }

    /// Where `keyPath` was written, or its nearest written section, or the file's start.
    public func location(of keyPath: String) -> SourceLocation? {
        var key = Substring(keyPath)
        while true {
            if let l = locations[String(key)] { return l }
            guard let dot = key.lastIndex(of: ".") else { break }
            key = key[..<dot]
        }
        return path.map { SourceLocation(file: $0, line: 1, column: 1) }
    }

    /// One column the mapping names, with the key path of its setting.
    public struct MappedColumn: Sendable, Hashable {
        /// "conversations.columns.id", "messages.columns.content", …
        public var keyPath: String
        /// The table, as written (`helpdesk.tickets`).
        public var table: String
        public var column: String

        public init(keyPath: String, table: String, column: String) {
            self.keyPath = keyPath
            self.table = table
            self.column = column
        }
    }

    /// Every column named, conversations first, in the order of `Conversations` and `Messages`:
    /// what the adapter checks against the database before it starts.
    public var mappedColumns: [MappedColumn] {
        let c = conversations, m = messages
        let conv: [(String, String?)] = [
            ("id", c.id), ("customer_id", c.customerID), ("channel", c.channel), ("locale", c.locale),
            ("owner", c.owner), ("assigned_to_agent", c.assignedToAgent),
            ("customer_message_count", c.customerMessageCount), ("tags", c.tags), ("metadata", c.metadata),
            ("created_at", c.createdAt), ("updated_at", c.updatedAt),
        ]
        let msg: [(String, String?)] = [
            ("seq", m.seq), ("id", m.id), ("conversation_id", m.conversationID), ("kind", m.kind),
            ("sender_type", m.senderType), ("sender_id", m.senderID), ("sender_name", m.senderName),
            ("content", m.content), ("created_at", m.createdAt), ("rule_id", m.ruleID),
            ("idempotency_key", m.idempotencyKey), ("quick_replies", m.quickReplies),
        ]
        return conv.compactMap { k, v in v.map { MappedColumn(keyPath: "conversations.columns." + k, table: c.table, column: $0) } }
            + msg.compactMap { k, v in v.map { MappedColumn(keyPath: "messages.columns." + k, table: m.table, column: $0) } }
    }
}
