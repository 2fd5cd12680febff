import UsherDiagnostics
import UsherYAML

/// Turns a mapping file's document into an `SQLMapping` (docs/mapping.md), reporting every
/// problem, in the style of the bot and rule files.
struct MappingFileParser {
    static let fileKeys = ["mapping", "usher_schema", "intake", "poll_interval", "conversations", "messages"]
    static let conversationKeys = ["table", "columns", "owner_values", "ownership"]
    static let messageKeys = ["table", "columns", "sender_values", "kind_values", "time", "write", "where"]
    static let conversationColumns = ["id", "customer_id", "channel", "locale", "owner", "assigned_to_agent",
                                      "customer_message_count", "tags", "metadata", "created_at", "updated_at"]
    static let messageColumns = ["seq", "id", "conversation_id", "kind", "sender_type", "sender_id", "sender_name",
                                 "content", "created_at", "rule_id", "idempotency_key", "quick_replies"]
    /// Required columns, each with the example value of its "add a line like" hint.
    static let requiredConversationColumns = [("id", "ticket_id")]
    static let requiredMessageColumns = [("seq", "event_no"), ("conversation_id", "ticket_id"),
                                         ("sender_type", "author_role"), ("content", "body"),
                                         ("created_at", "created_at")]

    /// Keys that are not allowed in a section but are in another one: where they belong.
    static let misplacedAtTop: [String: String] = [
        "table": "in 'conversations' and 'messages'", "columns": "in 'conversations' and 'messages'",
        "owner_values": "in 'conversations'", "ownership": "in 'conversations'", "sender_values": "in 'messages'",
        "kind_values": "in 'messages'", "time": "in 'messages'", "write": "in 'messages'", "where": "in 'messages'",
    ]
    static let misplacedInConversations: [String: String] = columnsHere("conversations")
        .merging(["sender_values": "in 'messages'", "kind_values": "in 'messages'", "time": "in 'messages'",
                  "write": "in 'messages'", "where": "in 'messages'"]) { a, _ in a }
        .merging(topLevel) { a, _ in a }
    static let misplacedInMessages: [String: String] = columnsHere("messages")
        .merging(["owner_values": "in 'conversations'", "ownership": "in 'conversations'"]) { a, _ in a }
        .merging(topLevel) { a, _ in a }
    static let misplacedInConversationColumns: [String: String] = [
        "table": "in 'conversations', beside 'columns'", "owner_values": "in 'conversations', beside 'columns'",
        "ownership": "in 'conversations', beside 'columns'",
    ].merging(onlyIn("messages")) { a, _ in a }
    static let misplacedInMessageColumns: [String: String] = [
        "table": "in 'messages', beside 'columns'", "sender_values": "in 'messages', beside 'columns'",
        "kind_values": "in 'messages', beside 'columns'", "time": "in 'messages', beside 'columns'",
        "write": "in 'messages', beside 'columns'", "where": "in 'messages', beside 'columns'",
    ].merging(onlyIn("conversations")) { a, _ in a }

    private static let topLevel = Dictionary(uniqueKeysWithValues: ["mapping", "usher_schema", "intake", "poll_interval"]
        .map { ($0, "at the top level, not indented") })

    /// Column names written straight under `conversations:` or `messages:`: they belong in its
    /// `columns`, or in the other table's `columns`.
    private static func columnsHere(_ table: String) -> [String: String] {
        let own = table == "conversations" ? conversationColumns : messageColumns
        return Dictionary(uniqueKeysWithValues: own.map { ($0, "in '\(table).columns'") }).merging(onlyIn(table == "conversations" ? "messages" : "conversations")) { a, _ in a }
    }

    /// The columns only `table` has, pointing there.
    private static func onlyIn(_ table: String) -> [String: String] {
        let (own, other) = table == "conversations" ? (conversationColumns, messageColumns) : (messageColumns, conversationColumns)
        return Dictionary(uniqueKeysWithValues: own.filter { !other.contains($0) }.map { ($0, "in '\(table).columns'") })
    }

    let reader: NodeReader
    private var locations: [String: SourceLocation] = [:]
    private var expressionLocations: [String: [SourceLocation]] = [:]

    init(reader: NodeReader) { self.reader = reader }

    /// The mapping, or `nil` when something required is missing or invalid (the reader holds
    /// every diagnostic; warnings alone do not stop it).
    mutating func parse() -> SQLMapping? {
        guard let root = reader.document.root,
              let top = section(root, nil, allowed: Self.fileKeys, misplaced: Self.misplacedAtTop) else { return nil }

        if let v = reader.require(top["mapping"], "mapping", in: root, "the mapping file", example: "mapping: 1") {
            locations["mapping"] = v.location
            if let s = reader.text(v, "'mapping'"), s != "1" {
                reader.error("unsupported-version", "this Usher understands mapping files of version 1, found '\(s)'; write 'mapping: 1'", at: v)
            }
        }
        var usherSchema = "usher"
        if let v = top["usher_schema"], let s = identifier(v, "usher_schema") { usherSchema = s }
        var intake = SQLMapping.Intake.trigger
        if let v = top["intake"], let i = choice(v, "intake", "intake", as: SQLMapping.Intake.self) { intake = i }
        var pollInterval = Duration.seconds(1)
        if let v = top["poll_interval"], let d = interval(v, "poll_interval") { pollInterval = d }

        var conversations: (SQLMapping.Conversations, YAMLNode)?
        if let v = top["conversations"] {
            locations["conversations"] = keyNode(root, "conversations")?.location
            conversations = self.conversations(v)
        } else {
            reader.error("missing-key", "the mapping file needs 'conversations'; add a 'conversations:' section with the table and its columns, like 'conversations: {table: tickets, columns: {id: ticket_id}}'", at: root)
        }
        var messages: (SQLMapping.Messages, YAMLNode)?
        if let v = top["messages"] {
            locations["messages"] = keyNode(root, "messages")?.location
            messages = self.messages(v)
        } else {
            reader.error("missing-key", "the mapping file needs 'messages'; add a 'messages:' section with the table and its columns (see docs/mapping.md)", at: root)
        }
        if case let (c, _)? = conversations, case let (m, tableNode)? = messages, c.table == m.table {
            reader.error("same-table", "'messages.table' names the conversations table '\(c.table)' again; messages need a table of their own", at: tableNode)
        }

        guard !reader.diagnostics.hasErrors, case let (c, _)? = conversations, case let (m, _)? = messages else { return nil }
        var mapping = SQLMapping(conversations: c, messages: m, usherSchema: usherSchema, intake: intake,
                                 pollInterval: pollInterval, path: reader.file, locations: locations)
        mapping.expressionLocations = expressionLocations
        return mapping
    }

    // MARK: The two tables

    /// The conversations section; `nil` when something required is missing or invalid.
    private mutating func conversations(_ node: YAMLNode) -> (SQLMapping.Conversations, YAMLNode)? {
        guard let m = section(node, "conversations", allowed: Self.conversationKeys,
                              misplaced: Self.misplacedInConversations) else { return nil }
        let table = reader.require(m["table"], "table", in: node, "'conversations'", example: "table: helpdesk.tickets")
            .flatMap { v in tableName(v, "conversations.table").map { ($0, v) } }
        var columns: [String: String]?
        if let v = reader.require(m["columns"], "columns", in: node, "'conversations'", example: "columns: {id: ticket_id}") {
            locations["conversations.columns"] = keyNode(node, "columns")?.location
            columns = self.columns(v, "conversations", allowed: Self.conversationColumns,
                                   required: Self.requiredConversationColumns,
                                   misplaced: Self.misplacedInConversationColumns)
        }

        var owners = SQLMapping.OwnerValues()
        if let v = m["owner_values"] {
            valuesSection("owner_values", in: node, "conversations", needs: "owner", like: "owner: handled_by", columns: columns)
            owners = roleValues(v, "conversations.owner_values", "owner value", defaults: owners,
                                single: [("bot", \.bot), ("waiting", \.waiting), ("agent", \.agent)])
        }

        var ownership: SQLMapping.Ownership?
        if let v = m["ownership"], let key = keyNode(node, "ownership") {
            locations["conversations.ownership"] = key.location
            ownership = self.ownership(v, in: key)
            if let owner = columns?["owner"] {
                reader.error("owner-and-ownership", "'ownership' reads who owns a conversation from the application's columns, and "
                             + "'columns.owner' (\(owner)) is a column Usher writes its own owner into: keep one of them", at: key)
            }
        }

        guard case let (table, tableNode)? = table, let columns, let id = columns["id"] else { return nil }
        return (SQLMapping.Conversations(
            table: table, id: id, customerID: columns["customer_id"], channel: columns["channel"],
            locale: columns["locale"], owner: columns["owner"], assignedToAgent: columns["assigned_to_agent"],
            customerMessageCount: columns["customer_message_count"], tags: columns["tags"],
            metadata: columns["metadata"], createdAt: columns["created_at"], updatedAt: columns["updated_at"],
            ownerValues: owners, ownership: ownership), tableNode)
    }

    /// `ownership:` — `agent` and `waiting` conditions (at least one) and the `handoff` values.
    private mutating func ownership(_ node: YAMLNode, in key: YAMLNode) -> SQLMapping.Ownership? {
        let path = "conversations.ownership"
        guard let o = section(node, path, allowed: ["agent", "waiting", "handoff"], misplaced: [:]) else { return nil }
        var result = SQLMapping.Ownership()
        if let v = o["agent"] { result.agent = expression(v, path + ".agent") }
        if let v = o["waiting"] { result.waiting = expression(v, path + ".waiting") }
        if o["agent"] == nil && o["waiting"] == nil {
            reader.error("missing-key", "'\(path)' needs 'agent' (a person holds the conversation) or 'waiting' (it waits for one), "
                         + "or both: conditions over the conversation's columns, like 'agent: \"status = 0 AND assignee_id IS NOT NULL\"'", at: key)
        }
        if let v = o["handoff"] {
            locations[path + ".handoff"] = keyNode(node, "handoff")?.location
            result.handoff = writtenValues(v, path + ".handoff", from: [])
        } else {
            reader.error("missing-key", "'\(path)' needs 'handoff': what Usher writes in the conversation's row when it hands it to "
                         + "the people, so that the application's columns say so too, like 'handoff: {status: 0}'", at: key)
        }
        return result
    }

    /// A condition over a row's columns (`SQLExpression`), with where each of its characters is.
    private mutating func expression(_ node: YAMLNode, _ keyPath: String) -> SQLExpression? {
        locations[keyPath] = node.location
        guard let text = reader.text(node, "'\(keyPath)'") else { return nil }
        do {
            let e = try SQLExpression(text)
            expressionLocations[keyPath] = (0...text.unicodeScalars.count).map { reader.location(ofOffset: $0, in: node) }
            return e
        } catch {
            reader.report(.error("invalid-condition", "'\(keyPath)' is not a condition Usher can use: \(error.reason)",
                                 at: reader.location(ofOffset: error.offset, in: node)))
            return nil
        }
    }

    /// The messages section; `nil` when something required is missing or invalid.
    private mutating func messages(_ node: YAMLNode) -> (SQLMapping.Messages, YAMLNode)? {
        guard let m = section(node, "messages", allowed: Self.messageKeys, misplaced: Self.misplacedInMessages) else { return nil }
        let table = reader.require(m["table"], "table", in: node, "'messages'", example: "table: helpdesk.ticket_events")
            .flatMap { v in tableName(v, "messages.table").map { ($0, v) } }
        var columns: [String: String]?
        if let v = reader.require(m["columns"], "columns", in: node, "'messages'", example: "columns: {seq: event_no, …}") {
            locations["messages.columns"] = keyNode(node, "columns")?.location
            columns = self.columns(v, "messages", allowed: Self.messageColumns, required: Self.requiredMessageColumns,
                                   misplaced: Self.misplacedInMessageColumns)
        }
        var senders = SQLMapping.SenderValues()
        if let v = m["sender_values"] {
            locations["messages.sender_values"] = keyNode(node, "sender_values")?.location
            senders = roleValues(v, "messages.sender_values", "sender value", defaults: senders,
                                 single: [("bot", \.bot), ("system", \.system)],
                                 lists: [("customer", \.customer), ("agent", \.agent)])
        }

        var kinds = SQLMapping.KindValues()
        if let v = m["kind_values"] {
            valuesSection("kind_values", in: node, "messages", needs: "kind", like: "kind: event_type", columns: columns)
            kinds = roleValues(v, "messages.kind_values", "kind value", defaults: kinds,
                               single: [("message", \.message), ("close", \.close)])
        }
        var time = SQLMapping.TimeFormat.timestamptz
        if let v = m["time"], let t = choice(v, "messages.time", "time format", as: SQLMapping.TimeFormat.self) { time = t }
        let filter = m["where"].flatMap { expression($0, "messages.where") }
        var write: [SQLMapping.WrittenColumn] = []
        if let v = m["write"] {
            locations["messages.write"] = keyNode(node, "write")?.location
            write = writtenValues(v, "messages.write", from: ["conversation", "message"])
            // Usher's own columns keep Usher's values: a reply with another text or sender type
            // would not be the reply.
            for w in write {
                guard let own = ownColumns(columns).first(where: { $0.column == w.column }),
                      let at = locations["messages.write.\(w.column)"] else { continue }
                reader.report(.error("written-by-usher", "'messages.write' names '\(w.column)', the column of 'messages.columns.\(own.key)': "
                                     + "Usher writes its own value there; remove it from 'write'", at: at))
            }
        }

        guard case let (table, tableNode)? = table, let columns, let seq = columns["seq"], let conversationID = columns["conversation_id"],
              let senderType = columns["sender_type"], let content = columns["content"],
              let createdAt = columns["created_at"] else { return nil }
        return (SQLMapping.Messages(
            table: table, seq: seq, id: columns["id"], conversationID: conversationID, kind: columns["kind"],
            senderType: senderType, senderID: columns["sender_id"], senderName: columns["sender_name"],
            content: content, createdAt: createdAt, ruleID: columns["rule_id"],
            idempotencyKey: columns["idempotency_key"], quickReplies: columns["quick_replies"], senderValues: senders, kindValues: kinds, time: time, write: write,
            filter: filter),
                tableNode)
    }

    /// The mapped columns whose values Usher writes itself (`SQLMapping.Messages.ownColumns`).
    private func ownColumns(_ columns: [String: String]?) -> [(key: String, column: String)] {
        ["seq", "id", "conversation_id", "kind", "sender_type", "content", "idempotency_key"]
            .compactMap { k in columns?[k].map { (k, $0) } }
    }

    /// `write:` or `handoff:`: column → value (`SQLMapping.WrittenValue`). A plain `null` or
    /// `~` is NULL, `default` the column's default, `now()` the time of the write, and
    /// `conversation.x` / `message.x` a column of that row (where `rows` allows them); anything
    /// else — and every quoted scalar — a constant.
    private mutating func writtenValues(_ node: YAMLNode, _ path: String, from rows: [String]) -> [SQLMapping.WrittenColumn] {
        guard let pairs = node.mapping, !pairs.isEmpty else {
            reader.error("wrong-type", node.mapping == nil && !node.isNull
                         ? "expected a mapping of columns to values for '\(path)', found \(node.kindName)"
                         : "'\(path)' is empty; write a column and its value on each line below it, like 'message_type: 1'", at: node)
            return []
        }
        var out: [SQLMapping.WrittenColumn] = []
        for pair in pairs {
            guard let key = pair.key.scalar else { continue }
            if let (offset, reason) = SQLIdentifier.problem(key[...]) {
                reader.report(.error("invalid-identifier", "'\(key)' is not a plain SQL identifier for a column of '\(path)': \(reason)",
                                     at: reader.location(ofOffset: offset, in: pair.key)))
                continue
            }
            locations["\(path).\(key)"] = pair.value.location
            if let v = writtenValue(pair.value, "\(path).\(key)", from: rows) { out.append(.init(key, v)) }
        }
        return out
    }

    private func writtenValue(_ node: YAMLNode, _ keyPath: String, from rows: [String]) -> SQLMapping.WrittenValue? {
        if node.isNull { return .null }
        guard let s = reader.text(node, "'\(keyPath)'") else { return nil }
        guard node.scalarStyle == .plain else { return .constant(s) }
        switch s {
        case "default": return .columnDefault
        case "now()": return .now
        default: break
        }
        guard let dot = s.firstIndex(of: "."), ["conversation", "message"].contains(s[..<dot]) else { return .constant(s) }
        let row = String(s[..<dot]), column = s[s.index(after: dot)...]
        guard rows.contains(row) else {
            reader.error("invalid-value", "'\(keyPath)' cannot take a column of the \(row)'s row; write a constant, null, default or now() (or quote '\(s)': text)",
                         at: node)
            return nil
        }
        if let (offset, reason) = SQLIdentifier.problem(column) {
            reader.report(.error("invalid-identifier", "'\(column)' is not a plain SQL identifier for a column of the \(row)'s row: \(reason)",
                                 at: reader.location(ofOffset: row.count + 1 + offset, in: node)))
            return nil
        }
        return row == "conversation" ? .conversation(String(column)) : .message(String(column))
    }

    /// `columns:` of a table: setting → column, every column a plain identifier, none twice.
    private mutating func columns(_ node: YAMLNode, _ table: String, allowed: [String], required: [(String, String)],
                                  misplaced: [String: String]) -> [String: String]? {
        let path = table + ".columns"
        guard let m = section(node, path, allowed: allowed, misplaced: misplaced) else { return nil }
        var out: [String: String] = [:]
        var mappedBy: [String: (key: String, node: YAMLNode)] = [:]
        var seen = Set<String>()
        for pair in node.mapping ?? [] {   // file order: a repeated column is reported where it is repeated
            guard let key = pair.key.scalar, m[key] != nil, seen.insert(key).inserted,
                  let column = identifier(pair.value, path + "." + key) else { continue }
            out[key] = column
            if let first = mappedBy[column] {
                reader.error("duplicate-column", "column '\(column)' is already mapped to '\(first.key)' in '\(path)'; each setting needs a column of its own",
                             at: pair.value, notes: [.init("'\(first.key)' maps it here", at: first.node.location)])
            } else {
                mappedBy[column] = (key, pair.value)
            }
        }
        for (key, example) in required {
            _ = reader.require(m[key], key, in: node, "'\(path)'", example: "\(key): \(example)")
        }
        return out
    }

    /// Records where a section of values is, and warns when the column its values are for is
    /// not mapped.
    private mutating func valuesSection(_ key: String, in node: YAMLNode, _ table: String, needs column: String,
                                        like example: String, columns: [String: String]?) {
        guard let keyNode = keyNode(node, key) else { return }
        locations[table + "." + key] = keyNode.location
        if let columns, columns[column] == nil {
            reader.warning("unused-" + key.replacingOccurrences(of: "_", with: "-"),
                           "'\(key)' has no effect: '\(table).columns' maps no '\(column)' column; map one, like '\(example)', or remove '\(key)'",
                           at: keyNode)
        }
    }

    /// `owner_values:`, `kind_values:` or `sender_values:`: what is written replaces the default
    /// of its role (a `lists` role takes one value or a list), and no value may stand for two roles.
    private mutating func roleValues<T>(_ node: YAMLNode, _ path: String, _ what: String, defaults: T,
                                        single: [(String, WritableKeyPath<T, String>)],
                                        lists: [(String, WritableKeyPath<T, [String]>)] = []) -> T {
        var values = defaults
        guard let m = section(node, path, allowed: lists.map(\.0) + single.map(\.0), misplaced: [:]) else { return values }
        var given: [Given] = []
        for (role, key) in lists {
            guard let n = m[role] else {
                given += values[keyPath: key].map { Given(role: role, value: $0, node: nil) }
                continue
            }
            guard let items = list(n, path + "." + role) else { continue }
            values[keyPath: key] = items.map(\.0)
            given += items.map { Given(role: role, value: $0.0, node: $0.1) }
        }
        for (role, key) in single {
            guard let n = m[role] else {
                given.append(Given(role: role, value: values[keyPath: key], node: nil))
                continue
            }
            guard let v = value(n, path + "." + role) else { continue }
            values[keyPath: key] = v
            given.append(Given(role: role, value: v, node: n))
        }
        distinct(given, what)
        return values
    }

    // MARK: Values

    /// A value for a role, from the file (`node`) or the default (`nil`).
    private struct Given {
        var role: String
        var value: String
        var node: YAMLNode?
    }

    /// Reports a value that stands for two roles (or twice for one): Usher could not tell which
    /// is meant. The later of two written values is reported; a written value that equals a
    /// role's default is reported where it is written.
    private func distinct(_ values: [Given], _ what: String) {
        let written = values.filter { $0.node != nil }.sorted { $0.node!.location < $1.node!.location }
        var seen: [String: Given] = [:]
        for v in written + values.filter({ $0.node == nil }) {
            guard let first = seen[v.value] else { seen[v.value] = v; continue }
            // Both are Usher's own writes, never read as inbound: one value may serve both.
            if Set([first.role, v.role]) == ["bot", "system"] { continue }
            if let node = v.node, let firstNode = first.node {
                let message = first.role == v.role
                    ? "\(what) '\(v.value)' is listed twice for '\(v.role)'"
                    : "\(what) '\(v.value)' is given for both '\(first.role)' and '\(v.role)'; Usher could not tell them apart"
                reader.error("duplicate-value", message, at: node, notes: [.init("first given here", at: firstNode.location)])
            } else if let firstNode = first.node {
                reader.error("duplicate-value", "\(what) '\(v.value)' for '\(first.role)' is also the default for '\(v.role)'; Usher could not tell them apart: set '\(v.role)' too", at: firstNode)
            }
        }
    }

    /// One text value, not empty, its location recorded.
    private mutating func value(_ node: YAMLNode, _ keyPath: String) -> String? {
        locations[keyPath] = node.location
        guard let s = reader.text(node, "'\(keyPath)'") else { return nil }
        if s.isEmpty {
            reader.error("empty-value", "'\(keyPath)' is empty text; write the value the database uses", at: node)
            return nil
        }
        return s
    }

    /// One value or a list of them, at least one, none empty, its location recorded.
    private mutating func list(_ node: YAMLNode, _ keyPath: String) -> [(String, YAMLNode)]? {
        locations[keyPath] = node.location
        guard let items = reader.texts(node, "'\(keyPath)'") else { return nil }
        if items.isEmpty {
            let role = keyPath.split(separator: ".").last ?? ""
            reader.error("empty-list", "'\(keyPath)' lists no values; write at least one, like '\(role): [\(role)]'", at: node)
            return nil
        }
        var ok = true
        for (s, n) in items where s.isEmpty {
            reader.error("empty-value", "an item of '\(keyPath)' is empty text; write the value the database uses", at: n)
            ok = false
        }
        return ok ? items : nil
    }

    /// A column or schema name.
    private mutating func identifier(_ node: YAMLNode, _ keyPath: String) -> String? {
        locations[keyPath] = node.location
        guard let s = reader.text(node, "'\(keyPath)'") else { return nil }
        if let (offset, reason) = SQLIdentifier.problem(s[...]) {
            reader.report(.error("invalid-identifier", "'\(s)' is not a plain SQL identifier for '\(keyPath)': \(reason); use letters, digits and '_', not starting with a digit, at most \(SQLIdentifier.maxBytes) bytes",
                                 at: reader.location(ofOffset: offset, in: node)))
            return nil
        }
        return s
    }

    /// `table` or `schema.table`.
    private mutating func tableName(_ node: YAMLNode, _ keyPath: String) -> String? {
        locations[keyPath] = node.location
        guard let s = reader.text(node, "'\(keyPath)'") else { return nil }
        if let (offset, reason) = SQLIdentifier.tableProblem(s) {
            reader.report(.error("invalid-identifier", "'\(s)' is not a table name for '\(keyPath)': \(reason); write 'table' or 'schema.table' in letters, digits and '_'",
                                 at: reader.location(ofOffset: offset, in: node)))
            return nil
        }
        return s
    }

    /// One of an enumeration's raw values.
    private mutating func choice<E: RawRepresentable & CaseIterable>(_ node: YAMLNode, _ keyPath: String, _ what: String,
                                                                      as _: E.Type) -> E? where E.RawValue == String {
        locations[keyPath] = node.location
        guard let s = reader.text(node, "'\(keyPath)'") else { return nil }
        if let e = E(rawValue: s) { return e }
        let names = E.allCases.map(\.rawValue)
        let listed = names.dropLast().joined(separator: ", ") + " or " + names.last!
        reader.error("invalid-value", "unknown \(what) '\(s)'\(Suggestion.hint(for: s, in: names)); use \(listed)", at: node)
        return nil
    }

    static let pollRange = Duration.milliseconds(10)...Duration.seconds(3600)

    /// `500ms`, or a duration as rule files write them (`2s`, `1m`), within `pollRange`.
    private mutating func interval(_ node: YAMLNode, _ keyPath: String) -> Duration? {
        locations[keyPath] = node.location
        guard let s = reader.text(node, "'\(keyPath)'") else { return nil }
        let duration: Duration?
        if s.hasSuffix("ms"), !s.dropLast(2).isEmpty, s.dropLast(2).allSatisfy({ $0.isASCII && $0.isNumber }) {
            duration = Int64(s.dropLast(2)).map { .milliseconds($0) }
        } else {
            duration = DurationText.parse(s).map { .milliseconds(Int64(($0 * 1000).rounded())) }
        }
        guard let duration else {
            reader.error("invalid-duration", "'\(s)' is not a duration for '\(keyPath)'; write a number and a unit: 500ms, 1s, 2s, 1m", at: node)
            return nil
        }
        guard Self.pollRange.contains(duration) else {
            reader.error("out-of-range", "'\(keyPath)' must be between 10ms and 1h, found '\(s)'", at: node)
            return nil
        }
        return duration
    }

    // MARK: Sections

    /// The entries of a section (`nil`: the top level), reporting unknown keys — and keys that
    /// belong in another section, saying where.
    private func section(_ node: YAMLNode, _ path: String?, allowed: [String], misplaced: [String: String]) -> [String: YAMLNode]? {
        let context = path.map { "'\($0)'" } ?? "the mapping file"
        if node.isNull, let path {
            reader.error("wrong-type", "\(context) is empty; write its settings on the lines below '\(path.split(separator: ".").last!):', indented", at: node)
            return nil
        }
        guard let pairs = node.mapping else { return reader.mapping(node, context, allowed: allowed) }
        var kept: [YAMLPair] = []
        for pair in pairs {
            if let key = pair.key.scalar, !allowed.contains(key), let home = misplaced[key] {
                reader.error("unknown-key", "unknown key '\(key)' in \(context); it belongs \(home)", at: pair.key)
            } else {
                kept.append(pair)
            }
        }
        let rest = YAMLNode(.mapping(kept), start: node.start, end: node.end, tag: node.tag, file: node.file)
        return reader.mapping(rest, context, allowed: allowed)
    }

    /// The key node of `key` in a mapping node.
    private func keyNode(_ node: YAMLNode, _ key: String) -> YAMLNode? {
        node.mapping?.first { $0.key.scalar == key }?.key
    }
}
