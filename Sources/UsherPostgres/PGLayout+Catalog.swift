import UsherDiagnostics
import UsherSQLMapping
import UsherStore

extension PGLayout {
    /// Checks a mapping against the database's catalogue before anything runs, every problem a
    /// diagnostic at the line of the mapping file that caused it (`MappingMismatch`): every
    /// mapped table and column exists; each column's type fits what Usher reads and writes
    /// there; each value of the mapping (sender, kind and owner values) is a value of its
    /// column, written as the column reads it back. Learns every column's type (parameters
    /// travel as text and are cast to them) and default.
    static func resolve(_ m: SQLMapping, _ db: PGConnection) throws -> PGLayout {
        var layout = PGLayout(m)
        if layout.isNative { return layout }
        var check = PGMappingCheck(mapping: m, db: db)
        try check.run(&layout)
        if !check.problems.isEmpty { throw PostgresStore.MappingMismatch(diagnostics: check.problems) }
        return layout
    }
}

/// What `PGLayout.resolve` finds wrong, collected so that one start reports every problem.
struct PGMappingCheck {
    let mapping: SQLMapping
    let db: PGConnection
    var problems: [Diagnostic] = []
    /// Each table's columns, by table as the mapping writes it.
    var tables: [String: [String: PGColumn]] = [:]

    init(mapping: SQLMapping, db: PGConnection) {
        self.mapping = mapping
        self.db = db
    }

    mutating func report(_ code: String, _ message: String, at keyPath: String) {
        problems.append(mapping.diagnostic(code, message, at: keyPath))
    }

    mutating func run(_ layout: inout PGLayout) throws {
        let m = mapping
        for (key, table) in [("conversations.table", m.conversations.table), ("messages.table", m.messages.table)] {
            guard let columns = try columns(of: table) else {
                report("missing-table", "the database has no table '\(table)' (or this role cannot see it); "
                       + "check the name and the schema, and that the role has USAGE on the schema", at: key)
                continue
            }
            tables[table] = columns
        }
        for column in m.mappedColumns where tables[column.table] != nil && self.column(column) == nil {
            let known = tables[column.table]!.keys.sorted()
            let hint = Suggestion.closest(to: column.column, in: known).map { "; did you mean '\($0)'?" }
                ?? "; it has: \(known.joined(separator: ", "))"
            report("missing-column", "table '\(column.table)' has no column '\(column.column)'\(hint)", at: column.keyPath)
        }
        checkTypes()
        try checkValues()
        try checkWritten(m.messages.write, into: m.messages.table, at: "messages.write")
        checkRepliesFillTheTable()
        if let filter = m.messages.filter { try checkCondition(filter, over: m.messages.table, at: "messages.where") }
        if let o = m.conversations.ownership {
            try checkWritten(o.handoff, into: m.conversations.table, at: "conversations.ownership.handoff")
            for (key, condition) in [("agent", o.agent), ("waiting", o.waiting)] {
                guard let condition else { continue }
                try checkCondition(condition, over: m.conversations.table, at: "conversations.ownership." + key)
            }
        }
        if m.intake == .trigger, try db.execute("SELECT relkind::text FROM pg_class WHERE oid = to_regclass($1)",
                                                [PGText.identifier(m.messages.table)]).text(0, 0) == "v" {
            report("view-with-trigger", "'\(m.messages.table)' is a view, and a view cannot have Usher's NOTIFY trigger; "
                   + "write 'intake: poll' (no DDL on the application's tables)", at: "intake")
        }
        func quoted(_ columns: [String: PGColumn]?) -> [String: PGColumn] {
            Dictionary(uniqueKeysWithValues: (columns ?? [:]).map { (PGText.identifier($0.key), $0.value) })
        }
        layout.conversationColumns = Set(tables[m.conversations.table]?.keys ?? [:].keys)
        layout.messageColumnNames = Set(tables[m.messages.table]?.keys ?? [:].keys)
        layout.conversationTypes = quoted(tables[m.conversations.table])
        layout.messageTypes = quoted(tables[m.messages.table])
        for (name, column) in layout.conversationTypes { if let d = column.defaultSQL { layout.conversationDefaults[name] = d } }
    }

    /// A table's columns from the catalogue; nil when there is no such table (or the role cannot
    /// see it).
    func columns(of table: String) throws -> [String: PGColumn]? {
        let r = try db.execute("""
            SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), t.typcategory::text, a.attnotnull,
                   pg_get_expr(d.adbin, d.adrelid), a.attidentity::text <> '' OR a.attgenerated::text <> ''
            FROM pg_attribute AS a JOIN pg_type AS t ON t.oid = a.atttypid
            LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
            """, [PGText.identifier(table)])
        if r.rows == 0 { return nil }
        var out: [String: PGColumn] = [:]
        for i in 0..<r.rows {
            out[r.string(i, 0)] = PGColumn(type: r.string(i, 1), category: r.string(i, 2).first ?? "X", notNull: r.bool(i, 3),
                                           defaultSQL: r.text(i, 4), filledByDatabase: r.bool(i, 5))
        }
        return out
    }

    func column(_ c: SQLMapping.MappedColumn) -> PGColumn? { tables[c.table]?[c.column] }

    /// What a mapped column must be, by key path: what Usher reads or writes there decides it.
    enum Need {
        case integer, numeric, string, boolean, json, time
    }

    static let needs: [String: (need: Need, what: String)] = [
        "conversations.columns.assigned_to_agent": (.boolean, "whether a person owns the conversation"),
        "conversations.columns.customer_message_count": (.numeric, "the customer's messages in the session, a number"),
        "conversations.columns.tags": (.json, "the tags as a JSON array"),
        "conversations.columns.metadata": (.json, "the metadata as a JSON object"),
        "conversations.columns.created_at": (.time, "when the conversation started"),
        "conversations.columns.updated_at": (.time, "when it last changed"),
        "messages.columns.seq": (.integer, "the order it reads new messages in"),
        "messages.columns.sender_id": (.string, "the bot's sender id (text, from bot.yaml)"),
        "messages.columns.sender_name": (.string, "the bot's name"),
        "messages.columns.content": (.string, "the message's text"),
        "messages.columns.created_at": (.time, "when the message was written"),
        "messages.columns.rule_id": (.string, "the id of the rule that wrote a reply"),
        "messages.columns.idempotency_key": (.string, "each reply's idempotency key (text)"),
        "messages.columns.quick_replies": (.json, "a reply's quick replies as a JSON array"),
    ]

    /// Every mapped column's type against what Usher reads and writes there; the messages'
    /// conversation column against the conversations' id.
    mutating func checkTypes() {
        let m = mapping
        let overridden = Set(m.messages.write.map(\.column))
        for mapped in m.mappedColumns {
            guard let column = column(mapped), let (need, what) = Self.needs[mapped.keyPath] else { continue }
            // A value of the mapping's own goes there instead of Usher's (`messages.write`).
            if mapped.table == m.messages.table && overridden.contains(mapped.column) { continue }
            let fits: Bool
            let wanted: String
            switch need {
            case .integer: (fits, wanted) = (column.isInteger, "an integer column (an identity or bigserial column)")
            case .numeric: (fits, wanted) = (column.isNumeric, "a number column")
            case .string: (fits, wanted) = (column.isString, "a text or varchar column")
            case .boolean: (fits, wanted) = (column.isBoolean, "a boolean column")
            case .json: (fits, wanted) = (column.isJSON || column.isString, "a json, jsonb or text column")
            case .time:
                switch m.messages.time {
                case .timestamptz: (fits, wanted) = (column.isTimestampTZ || column.isTimestamp,
                                                     "a timestamp column (with time zone, or without and holding UTC), or 'time: epoch' in 'messages'")
                case .epoch, .epochMillis: (fits, wanted) = (column.isNumeric,
                                                             "an integer column for 'time: \(m.messages.time.rawValue)'")
                }
            }
            if fits { continue }
            let code = mapped.keyPath == "messages.columns.seq" ? "seq-not-integer" : "wrong-column-type"
            // A column Usher writes on its replies can take the application's own value instead.
            let key = mapped.keyPath.split(separator: ".").last.map(String.init) ?? ""
            let instead = mapped.table == m.messages.table && ["sender_id", "sender_name", "rule_id", "created_at"].contains(key)
                ? ", or give the replies the application's own value there in 'messages.write' (like '\(mapped.column): \(key == "created_at" ? "now()" : "1")')"
                : ""
            report(code, "column '\(mapped.column)' of '\(mapped.table)' is \(column.described); Usher keeps \(what) there: map \(wanted)\(instead)",
                   at: mapped.keyPath)
        }
        let id = SQLMapping.MappedColumn(keyPath: "conversations.columns.id", table: m.conversations.table, column: m.conversations.id)
        let ref = SQLMapping.MappedColumn(keyPath: "messages.columns.conversation_id", table: m.messages.table,
                                          column: m.messages.conversationID)
        if let a = column(id), let b = column(ref), !a.comparable(with: b) {
            report("wrong-column-type", "column '\(ref.column)' of '\(ref.table)' is \(b.described) and '\(id.column)' of '\(id.table)' "
                   + "is \(a.described): a message names its conversation by the conversation's id, so the two must compare "
                   + "(both text, both numbers, or the same type)", at: ref.keyPath)
        }
    }

    /// Each value of the mapping — sender, kind and owner values — cast to its column's type and
    /// read back as text, as Usher's queries compare it: a value the column cannot hold, or one
    /// that reads back otherwise (`01` in an integer column, `yes` in a boolean), would never
    /// match a row.
    mutating func checkValues() throws {
        let m = mapping
        let s = m.messages.senderValues, k = m.messages.kindValues, o = m.conversations.ownerValues
        var values: [(column: SQLMapping.MappedColumn?, keyPath: String, value: String)] = []
        func mapped(_ key: String) -> SQLMapping.MappedColumn? { m.mappedColumns.first { $0.keyPath == key } }
        let sender = mapped("messages.columns.sender_type")
        values += s.customer.map { (sender, "messages.sender_values.customer", $0) }
        values += s.agent.map { (sender, "messages.sender_values.agent", $0) }
        values += [(sender, "messages.sender_values.bot", s.bot), (sender, "messages.sender_values.system", s.system)]
        if let kind = mapped("messages.columns.kind") {
            values += [(kind, "messages.kind_values.message", k.message), (kind, "messages.kind_values.close", k.close)]
        }
        if let owner = mapped("conversations.columns.owner") {
            values += [(owner, "conversations.owner_values.bot", o.bot), (owner, "conversations.owner_values.waiting", o.waiting),
                       (owner, "conversations.owner_values.agent", o.agent)]
        }
        for (mapped, keyPath, value) in values {
            guard let mapped, let column = column(mapped) else { continue }
            try checkValue(value, of: column, named: "column '\(mapped.column)' of '\(mapped.table)'", at: keyPath)
        }
    }

    /// `value` cast to `column`'s type and (`exact`) read back as text.
    mutating func checkValue(_ value: String, of column: PGColumn, named name: String, at keyPath: String, exact: Bool = true) throws {
        do {
            let back = try db.execute("SELECT ($1::\(column.type))::text", [value]).text(0, 0)
            if exact && back != value {
                report("invalid-value", "'\(value)' reads back from \(name) (\(column.described)) as '\(back ?? "NULL")': "
                       + "write '\(back ?? "")', the way the column gives it back", at: keyPath)
            }
        } catch {
            // Class 22 (bad input) or 42 (no such type): the value is wrong; anything else is not.
            guard error.code.hasPrefix("pg-22") || error.code.hasPrefix("pg-42") else { throw error }
            report("invalid-value", "'\(value)' is not a value of \(name) (\(column.described)): \(PGError.primary(error.message))",
                   at: keyPath)
        }
    }

    /// Written values (`messages.write`, `conversations.ownership.handoff`), each against its
    /// column of `table`: the column exists and the database does not fill it itself; a
    /// constant is a value of it; NULL only where the column takes it; `default` only where it
    /// has one (or takes NULL); `now()` only in a time or number column; a column of the
    /// conversation's or the inbound message's row exists and casts to the column's type.
    mutating func checkWritten(_ writes: [SQLMapping.WrittenColumn], into table: String, at section: String) throws {
        let m = mapping
        guard let columns = tables[table] else { return }
        for w in writes {
            let keyPath = "\(section).\(w.column)"
            let name = "column '\(w.column)' of '\(table)'"
            guard let column = columns[w.column] else {
                let hint = Suggestion.closest(to: w.column, in: columns.keys.sorted()).map { "; did you mean '\($0)'?" } ?? ""
                report("missing-column", "table '\(table)' has no column '\(w.column)'\(hint)", at: keyPath)
                continue
            }
            if column.filledByDatabase {
                report("invalid-value", "\(name) is an identity or generated column: the database fills it; remove it from '\(section)'", at: keyPath)
                continue
            }
            switch w.value {
            case let .constant(text):
                try checkValue(text, of: column, named: name, at: keyPath, exact: false)
            case .null where column.notNull:
                report("invalid-value", "\(name) is NOT NULL: it cannot take null; write a value", at: keyPath)
            case .columnDefault where column.notNull && column.defaultSQL == nil:
                report("invalid-value", "\(name) has no default and is NOT NULL; write a value", at: keyPath)
            case .now where !(column.isTimestamp || column.isTimestampTZ || column.type == "date" || column.isNumeric):
                report("invalid-value", "now() needs a timestamp, date or number column; \(name) is \(column.described)", at: keyPath)
            case let .conversation(source), let .message(source):
                let (row, sourceTable) = if case .conversation = w.value { ("conversation", m.conversations.table) } else { ("message", m.messages.table) }
                guard let from = tables[sourceTable]?[source] else {
                    if let known = tables[sourceTable] {
                        let hint = Suggestion.closest(to: source, in: known.keys.sorted()).map { "; did you mean '\($0)'?" } ?? ""
                        report("missing-column", "'\(row).\(source)': table '\(sourceTable)' has no column '\(source)'\(hint)", at: keyPath)
                    }
                    continue
                }
                do {
                    _ = try db.execute("SELECT (NULL::\(from.type))::\(column.type)")
                } catch {
                    guard error.code.hasPrefix("pg-42") else { throw error }
                    report("invalid-value", "'\(row).\(source)' is \(from.described) and \(name) is \(column.described): "
                           + "\(PGError.primary(error.message))", at: keyPath)
                }
            case .null, .columnDefault, .now:
                break
            }
        }
    }

    /// A condition of the mapping over `table`'s row, planned by the database as Usher's
    /// statements use it (its columns qualified): an unknown column, a syntax error or a
    /// condition that is not true or false is reported at its character in the file.
    mutating func checkCondition(_ condition: SQLExpression, over table: String, at keyPath: String) throws {
        guard let columns = tables[table] else { return }
        let (sql, source) = condition.sql(alias: "r", columns: Set(columns.keys))
        let prefix = "SELECT 1 FROM \(PGText.identifier(table)) AS r WHERE ("
        guard let (message, position) = try db.planProblem(prefix + sql + ")") else { return }
        // The server's position counts characters of the whole statement, from 1.
        let at = position.map { $0 - 1 - prefix.unicodeScalars.count }.flatMap { source.indices.contains($0) ? source[$0] : nil }
        problems.append(mapping.diagnostic("invalid-condition", "'\(keyPath)' does not work on '\(table)': \(message)",
                                           at: keyPath, offset: at ?? -1))
    }

    /// Every NOT NULL column without a default that a reply would leave empty, in one
    /// diagnostic: the insert would fail at the first reply.
    mutating func checkRepliesFillTheTable() {
        let m = mapping
        let table = m.messages.table
        // A mapped column that is not there may be the one meant to fill a column named here.
        guard let columns = tables[table], !problems.contains(where: { $0.code == "missing-column" }) else { return }
        // What a reply's insert names: the columns Usher writes (`PGSQL.insertOutgoing`) and the
        // written ones but those left to their default.
        let mm = m.messages
        var filled = Set([mm.conversationID, mm.kind, mm.senderType, mm.senderID, mm.senderName, mm.content, mm.createdAt,
                          mm.ruleID, mm.idempotencyKey, mm.quickReplies].compactMap { $0 })
        for w in mm.write { if case .columnDefault = w.value { filled.remove(w.column) } else { filled.insert(w.column) } }
        let empty = columns.filter { !$0.value.mayBeLeftOut && !filled.contains($0.key) }.keys.sorted()
        if !empty.isEmpty {
            let list = empty.map { "'\($0)'" }.joined(separator: ", ")
            report("missing-value", "Usher's replies would leave \(empty.count == 1 ? "the column" : "the columns") \(list) of '\(table)' "
                   + "empty, and \(empty.count == 1 ? "it is" : "they are") NOT NULL without a default; give "
                   + "\(empty.count == 1 ? "it a value" : "each a value") in 'messages.write': a constant, now(), null, "
                   + "conversation.COLUMN or message.COLUMN (like '\(empty[0]): conversation.\(empty[0])')", at: "messages.write")
        }
    }
}
