import Testing
import UsherDiagnostics
import UsherSQLMapping

/// A broken mapping file as an operator might write it, and exactly what `usher check` must say:
/// each diagnostic's headline, then its notes as `file:line:col: note: message`.
struct BrokenMapping: CustomTestStringConvertible, Sendable {
    let name: String
    let text: String
    let expected: [String]
    var testDescription: String { name }
}

/// A valid file to break in one place: `top`, `conversations` and `messages` are lines added at
/// the end of the top level and of each section.
func file(conversations: String = "", messages: String = "", top: String = "") -> String {
    """
    mapping: 1
    \(top)conversations:
      table: helpdesk.tickets
      columns:
        id: ticket_id
        owner: handled_by
    \(conversations)messages:
      table: helpdesk.ticket_events
      columns:
        seq: event_no
        conversation_id: ticket_id
        sender_type: author_role
        content: body
        created_at: created_at
    \(messages)
    """
}

let brokenMappings: [BrokenMapping] = [
    BrokenMapping(name: "misspelt top-level key", text: file(top: "usher_shema: bots\n"), expected: [
        #"m.yaml:2:1: error: [unknown-key] unknown key 'usher_shema' in the mapping file; did you mean 'usher_schema'?"#,
    ]),
    BrokenMapping(name: "misspelt column, so a required one is missing", text: file().replacingOccurrences(of: "    sender_type: author_role", with: "    sendr_type: author_role"), expected: [
        #"m.yaml:10:5: error: [missing-key] 'messages.columns' needs 'sender_type'; add a line like 'sender_type: author_role'"#,
        #"m.yaml:12:5: error: [unknown-key] unknown key 'sendr_type' in 'messages.columns'; did you mean 'sender_type'?"#,
    ]),
    BrokenMapping(name: "unknown key with nothing close", text: file(top: "colour: red\n"), expected: [
        #"m.yaml:2:1: error: [unknown-key] unknown key 'colour' in the mapping file; expected one of: mapping, usher_schema, intake, poll_interval, conversations, messages"#,
    ]),
    BrokenMapping(name: "key in the wrong section", text: file(conversations: "  time: epoch\n", messages: "  owner_values: {waiting: queue}\n"), expected: [
        #"m.yaml:7:3: error: [unknown-key] unknown key 'time' in 'conversations'; it belongs in 'messages'"#,
        #"m.yaml:16:3: error: [unknown-key] unknown key 'owner_values' in 'messages'; it belongs in 'conversations'"#,
    ]),
    BrokenMapping(name: "column of the other table", text: file().replacingOccurrences(of: "    owner: handled_by", with: "    content: subject"), expected: [
        #"m.yaml:6:5: error: [unknown-key] unknown key 'content' in 'conversations.columns'; it belongs in 'messages.columns'"#,
    ]),
    BrokenMapping(name: "no format version", text: String(file().drop { $0 != "\n" }.dropFirst()), expected: [
        #"m.yaml:1:1: error: [missing-key] the mapping file needs 'mapping'; add a line like 'mapping: 1'"#,
    ]),
    BrokenMapping(name: "unsupported format version", text: file().replacingOccurrences(of: "mapping: 1", with: "mapping: 2"), expected: [
        #"m.yaml:1:10: error: [unsupported-version] this Usher understands mapping files of version 1, found '2'; write 'mapping: 1'"#,
    ]),
    BrokenMapping(name: "no messages section", text: "mapping: 1\nconversations:\n  table: tickets\n  columns: {id: id}\n", expected: [
        #"m.yaml:1:1: error: [missing-key] the mapping file needs 'messages'; add a 'messages:' section with the table and its columns (see docs/mapping.md)"#,
    ]),
    BrokenMapping(name: "required columns missing", text: file().replacingOccurrences(of: "    content: body\n    created_at: created_at\n", with: ""), expected: [
        #"m.yaml:10:5: error: [missing-key] 'messages.columns' needs 'content'; add a line like 'content: body'"#,
        #"m.yaml:10:5: error: [missing-key] 'messages.columns' needs 'created_at'; add a line like 'created_at: created_at'"#,
    ]),
    BrokenMapping(name: "columns written as a list", text: file().replacingOccurrences(of: "  columns:\n    id: ticket_id\n    owner: handled_by\n", with: "  columns: [ticket_id, handled_by]\n"), expected: [
        #"m.yaml:4:12: error: [wrong-type] expected 'conversations.columns' written as a mapping of 'key: value' lines, found a list"#,
    ]),
    BrokenMapping(name: "table written as a mapping", text: file().replacingOccurrences(of: "table: helpdesk.tickets", with: "table: {schema: helpdesk, name: tickets}"), expected: [
        #"m.yaml:3:10: error: [wrong-type] expected text for 'conversations.table', found a mapping"#,
    ]),
    BrokenMapping(name: "section left empty", text: file().replacingOccurrences(of: "  columns:\n    id: ticket_id\n    owner: handled_by\n", with: "  columns:\n"), expected: [
        #"m.yaml:4:11: error: [wrong-type] 'conversations.columns' is empty; write its settings on the lines below 'columns:', indented"#,
    ]),
    BrokenMapping(name: "column with a dash", text: file().replacingOccurrences(of: "content: body", with: "content: message-body"), expected: [
        #"m.yaml:13:21: error: [invalid-identifier] 'message-body' is not a plain SQL identifier for 'messages.columns.content': '-' is not allowed; use letters, digits and '_', not starting with a digit, at most 63 bytes"#,
    ]),
    BrokenMapping(name: "column starting with a digit", text: file().replacingOccurrences(of: "seq: event_no", with: "seq: 2nd_seq"), expected: [
        #"m.yaml:10:10: error: [invalid-identifier] '2nd_seq' is not a plain SQL identifier for 'messages.columns.seq': a name cannot start with a digit; use letters, digits and '_', not starting with a digit, at most 63 bytes"#,
    ]),
    BrokenMapping(name: "column longer than 63 bytes", text: file().replacingOccurrences(of: "content: body", with: "content: " + String(repeating: "b", count: 64)), expected: [
        #"m.yaml:13:77: error: [invalid-identifier] 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' is not a plain SQL identifier for 'messages.columns.content': a name can be at most 63 bytes, this one is 64; use letters, digits and '_', not starting with a digit, at most 63 bytes"#,
    ]),
    BrokenMapping(name: "table with two dots", text: file().replacingOccurrences(of: "table: helpdesk.tickets", with: "table: db.helpdesk.tickets"), expected: [
        #"m.yaml:3:21: error: [invalid-identifier] 'db.helpdesk.tickets' is not a table name for 'conversations.table': it has more than one '.'; write 'table' or 'schema.table' in letters, digits and '_'"#,
    ]),
    BrokenMapping(name: "table with a space", text: file().replacingOccurrences(of: "table: helpdesk.ticket_events", with: "table: \"helpdesk.ticket events\""), expected: [
        #"m.yaml:8:26: error: [invalid-identifier] 'helpdesk.ticket events' is not a table name for 'messages.table': spaces are not allowed; write 'table' or 'schema.table' in letters, digits and '_'"#,
    ]),
    BrokenMapping(name: "schema that is not an identifier", text: file(top: "usher_schema: usher.state\n"), expected: [
        #"m.yaml:2:20: error: [invalid-identifier] 'usher.state' is not a plain SQL identifier for 'usher_schema': '.' is not allowed; use letters, digits and '_', not starting with a digit, at most 63 bytes"#,
    ]),
    BrokenMapping(name: "same column twice in one table", text: file().replacingOccurrences(of: "    owner: handled_by", with: "    owner: handled_by\n    customer_id: ticket_id"), expected: [
        #"m.yaml:7:18: error: [duplicate-column] column 'ticket_id' is already mapped to 'id' in 'conversations.columns'; each setting needs a column of its own"#,
        #"m.yaml:5:9: note: 'id' maps it here"#,
    ]),
    BrokenMapping(name: "same table for both", text: file().replacingOccurrences(of: "table: helpdesk.ticket_events", with: "table: helpdesk.tickets"), expected: [
        #"m.yaml:8:10: error: [same-table] 'messages.table' names the conversations table 'helpdesk.tickets' again; messages need a table of their own"#,
    ]),
    BrokenMapping(name: "sender value under two roles", text: file(messages: "  sender_values:\n    customer: [end_user, admin]\n    agent: [agent, admin]\n"), expected: [
        #"m.yaml:17:20: error: [duplicate-value] sender value 'admin' is given for both 'customer' and 'agent'; Usher could not tell them apart"#,
        #"m.yaml:16:26: note: first given here"#,
    ]),
    BrokenMapping(name: "sender value that is another role's default", text: file(messages: "  sender_values:\n    agent: [customer, staff]\n"), expected: [
        #"m.yaml:16:13: error: [duplicate-value] sender value 'customer' for 'agent' is also the default for 'customer'; Usher could not tell them apart: set 'customer' too"#,
    ]),
    BrokenMapping(name: "sender value listed twice", text: file(messages: "  sender_values: {customer: [user, user]}\n"), expected: [
        #"m.yaml:15:36: error: [duplicate-value] sender value 'user' is listed twice for 'customer'"#,
        #"m.yaml:15:30: note: first given here"#,
    ]),
    BrokenMapping(name: "empty list of sender values", text: file(messages: "  sender_values:\n    agent: []\n"), expected: [
        #"m.yaml:16:12: error: [empty-list] 'messages.sender_values.agent' lists no values; write at least one, like 'agent: [agent]'"#,
    ]),
    BrokenMapping(name: "empty sender value", text: file(messages: "  sender_values: {bot: \"\"}\n"), expected: [
        #"m.yaml:15:24: error: [empty-value] 'messages.sender_values.bot' is empty text; write the value the database uses"#,
    ]),
    BrokenMapping(name: "two values for the bot", text: file(messages: "  sender_values: {bot: [automation, bot]}\n"), expected: [
        #"m.yaml:15:24: error: [wrong-type] expected text for 'messages.sender_values.bot', found a list"#,
    ]),
    BrokenMapping(name: "owner values not distinct", text: file(conversations: "  owner_values: {bot: bot, waiting: queue, agent: queue}\n"), expected: [
        #"m.yaml:7:51: error: [duplicate-value] owner value 'queue' is given for both 'waiting' and 'agent'; Usher could not tell them apart"#,
        #"m.yaml:7:37: note: first given here"#,
    ]),
    BrokenMapping(name: "kind values without a kind column", text: file(messages: "  kind_values: {message: comment, close: resolved}\n"), expected: [
        #"m.yaml:15:3: warning: [unused-kind-values] 'kind_values' has no effect: 'messages.columns' maps no 'kind' column; map one, like 'kind: event_type', or remove 'kind_values'"#,
    ]),
    BrokenMapping(name: "kind values alike", text: file(messages: "  kind_values: {close: message}\n").replacingOccurrences(of: "    content: body", with: "    content: body\n    kind: event_type"), expected: [
        #"m.yaml:16:24: error: [duplicate-value] kind value 'message' for 'close' is also the default for 'message'; Usher could not tell them apart: set 'message' too"#,
    ]),
    BrokenMapping(name: "unknown time format", text: file(messages: "  time: timestamp\n"), expected: [
        #"m.yaml:15:9: error: [invalid-value] unknown time format 'timestamp'; did you mean 'timestamptz'?; use timestamptz, epoch or epoch_ms"#,
    ]),
    BrokenMapping(name: "unknown intake", text: file(top: "intake: listen\n"), expected: [
        #"m.yaml:2:9: error: [invalid-value] unknown intake 'listen'; use trigger or poll"#,
    ]),
    BrokenMapping(name: "poll interval without a unit", text: file(top: "poll_interval: 500\n"), expected: [
        #"m.yaml:2:16: error: [invalid-duration] '500' is not a duration for 'poll_interval'; write a number and a unit: 500ms, 1s, 2s, 1m"#,
    ]),
    BrokenMapping(name: "poll interval too short", text: file(top: "poll_interval: 0s\n"), expected: [
        #"m.yaml:2:16: error: [out-of-range] 'poll_interval' must be between 10ms and 1h, found '0s'"#,
    ]),
    BrokenMapping(name: "YAML syntax error", text: file(messages: "  sender_values: {agent: [agent, admin}\n"), expected: [
        #"m.yaml:15:39: error: [yaml-syntax] did not find expected ',' or ']' (while parsing a flow sequence that started at line 15, column 26); a [list] needs commas between its items and a closing ']'"#,
    ]),
    BrokenMapping(name: "duplicate key", text: file().replacingOccurrences(of: "    content: body", with: "    content: body\n    content: text"), expected: [
        #"m.yaml:14:5: error: [duplicate-key] duplicate key 'content' in this mapping"#,
        #"m.yaml:13:5: note: first defined here"#,
    ]),
    BrokenMapping(name: "tab indentation", text: file().replacingOccurrences(of: "    content: body", with: "\tcontent: body"), expected: [
        #"m.yaml:13:1: error: [tab-indent] tab character used for indentation; YAML needs spaces"#,
    ]),
    BrokenMapping(name: "anchor", text: file().replacingOccurrences(of: "conversation_id: ticket_id", with: "conversation_id: &t ticket_id"), expected: [
        #"m.yaml:11:22: error: [anchor] anchors (&name) are not supported in Usher files; repeat the value"#,
    ]),
    BrokenMapping(name: "empty file", text: "# nothing yet\n", expected: [
        #"m.yaml:1:1: error: [empty-file] the file is empty"#,
    ]),
    BrokenMapping(name: "a list, not a mapping", text: "- mapping: 1\n", expected: [
        #"m.yaml:1:1: error: [wrong-type] expected the mapping file written as a mapping of 'key: value' lines, found a list"#,
    ]),
    BrokenMapping(name: "written values Usher cannot write", text: file(messages: """
          write:
            body: 'hello'
            author_role: agent
            bad-name: 1
            inbox_id: conversation.inbox-id
            account_id: [1]

        """), expected: [
        #"m.yaml:16:11: error: [written-by-usher] 'messages.write' names 'body', the column of 'messages.columns.content': Usher writes its own value there; remove it from 'write'"#,
        #"m.yaml:17:18: error: [written-by-usher] 'messages.write' names 'author_role', the column of 'messages.columns.sender_type': Usher writes its own value there; remove it from 'write'"#,
        #"m.yaml:18:8: error: [invalid-identifier] 'bad-name' is not a plain SQL identifier for a column of 'messages.write': '-' is not allowed"#,
        #"m.yaml:19:33: error: [invalid-identifier] 'inbox-id' is not a plain SQL identifier for a column of the conversation's row: '-' is not allowed"#,
        #"m.yaml:20:17: error: [wrong-type] expected text for 'messages.write.account_id', found a list"#,
    ]),
    BrokenMapping(name: "written values empty", text: file(messages: "  write:\n"), expected: [
        #"m.yaml:15:9: error: [wrong-type] 'messages.write' is empty; write a column and its value on each line below it, like 'message_type: 1'"#,
    ]),
    BrokenMapping(name: "ownership beside an owner column, without its parts", text: file(conversations: "  ownership: {handof: {status: 0}}\n"), expected: [
        #"m.yaml:7:3: error: [missing-key] 'conversations.ownership' needs 'agent' (a person holds the conversation) or 'waiting' (it waits for one), or both: conditions over the conversation's columns, like 'agent: "status = 0 AND assignee_id IS NOT NULL"'"#,
        #"m.yaml:7:3: error: [missing-key] 'conversations.ownership' needs 'handoff': what Usher writes in the conversation's row when it hands it to the people, so that the application's columns say so too, like 'handoff: {status: 0}'"#,
        #"m.yaml:7:3: error: [owner-and-ownership] 'ownership' reads who owns a conversation from the application's columns, and 'columns.owner' (handled_by) is a column Usher writes its own owner into: keep one of them"#,
        #"m.yaml:7:15: error: [unknown-key] unknown key 'handof' in 'conversations.ownership'; did you mean 'handoff'?"#,
    ]),
    BrokenMapping(name: "conditions that are not one condition", text: file(conversations: """
          ownership:
            agent: "status = 0; DROP TABLE tickets"
            waiting: (status = 0 AND team_id = $1
            handoff: {status: message.status}

        """).replacingOccurrences(of: "    owner: handled_by\n", with: ""), expected: [
        #"m.yaml:7:23: error: [invalid-condition] 'conversations.ownership.agent' is not a condition Usher can use: ';' ends a statement: write one condition"#,
        #"m.yaml:8:40: error: [invalid-condition] 'conversations.ownership.waiting' is not a condition Usher can use: '$' is not allowed (no parameters or dollar quotes): write the value as a constant"#,
        #"m.yaml:9:23: error: [invalid-value] 'conversations.ownership.handoff.status' cannot take a column of the message's row; write a constant, null, default or now() (or quote 'message.status': text)"#,
    ]),
    BrokenMapping(name: "a row filter whose quote is not closed", text: file(messages: "  where: \"private = 'false\"\n"), expected: [
        #"m.yaml:15:21: error: [invalid-condition] 'messages.where' is not a condition Usher can use: the text opened here is not closed"#,
    ]),
    BrokenMapping(name: "every problem in one run", text: """
    mapping: 1
    intake: polling
    conversations:
      table: tickets
      columns: {id: id, chanel: source}
    messages:
      table: events
      columns: {seq: seq, conversation_id: conversation-id, sender_type: role, content: role, created_at: at}
      time: epochs

    """, expected: [
        #"m.yaml:2:9: error: [invalid-value] unknown intake 'polling'; use trigger or poll"#,
        #"m.yaml:5:21: error: [unknown-key] unknown key 'chanel' in 'conversations.columns'; did you mean 'channel'?"#,
        #"m.yaml:8:52: error: [invalid-identifier] 'conversation-id' is not a plain SQL identifier for 'messages.columns.conversation_id': '-' is not allowed; use letters, digits and '_', not starting with a digit, at most 63 bytes"#,
        #"m.yaml:8:85: error: [duplicate-column] column 'role' is already mapped to 'sender_type' in 'messages.columns'; each setting needs a column of its own"#,
        #"m.yaml:8:70: note: 'sender_type' maps it here"#,
        #"m.yaml:9:9: error: [invalid-value] unknown time format 'epochs'; did you mean 'epoch'?; use timestamptz, epoch or epoch_ms"#,
    ]),
]

@Suite("Broken mapping files")
struct BrokenMappingFileTests {
    @Test(arguments: brokenMappings)
    func diagnoses(_ c: BrokenMapping) {
        let (mapping, diagnostics) = SQLMapping.parse(path: "m.yaml", text: c.text)
        let got = diagnostics.sortedForDisplay().flatMap { d in
            [d.headline] + d.notes.map { n in (n.location.map { "\($0): " } ?? "") + "note: " + n.message }
        }
        #expect(got == c.expected, Comment(rawValue: "\n" + got.map { "        #\"\($0)\"#," }.joined(separator: "\n")))
        if c.expected.contains(where: { $0.contains(": error: ") }) {
            #expect(mapping == nil, "a mapping with errors must not load")
        } else {
            #expect(mapping != nil, "warnings alone must not stop a mapping")
        }
    }
}
