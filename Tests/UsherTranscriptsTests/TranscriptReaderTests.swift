import Foundation
import Testing
import UsherEngine
import UsherTranscripts

@Suite("transcript reading")
struct TranscriptReaderTests {
    /// Reads every record of `text` written to a file `name`; stops at the first error.
    func records(_ text: String, name: String = "t.jsonl", firstConversation: Int = 0) throws -> [TranscriptRecord] {
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let reader = try TranscriptReader(path: try replayWrite(Array(text.utf8), name, in: dir), firstConversationIndex: firstConversation)
        var out: [TranscriptRecord] = []
        while let r = try reader.next() { out.append(r) }
        return out
    }

    /// The error reading `text` raises.
    func error(_ text: String, name: String = "t.jsonl", sourceLocation: SourceLocation = #_sourceLocation) throws -> TranscriptError {
        do {
            _ = try records(text, name: name)
        } catch let e as TranscriptError {
            return e
        }
        Issue.record("expected an error", sourceLocation: sourceLocation)
        throw CancellationError()
    }

    @Test func eventsShape() throws {
        let r = try records("""
        {"conversation":"c-42","id":"m-1","at":"2026-11-29T10:00:00Z","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"hi","channel":"web","locale":"en-IN"}
        {"conversation":7,"id":8,"at":"2026-11-29T18:00:01.5+08:00","from":"Agent","text":"hello \\"there\\"\\n\\u00e9\\ud83d\\ude00","extra":{"ignored":[1,2,null,true]}}
        """)
        #expect(r.count == 2)
        guard case let .event(a) = r[0], case let .event(b) = r[1] else { Issue.record("not events: \(r)"); return }
        #expect(a.message == Message(id: "m-1", conversationID: "c-42", from: .customer, senderID: "u-7", senderName: "Pooja",
                                     text: "hi", at: TranscriptTime.parse("2026-11-29T10:00:00Z")!))
        #expect(a.line == 1 && a.channel == "web" && a.locale == "en-IN")
        #expect(b.message.conversationID == "7" && b.message.id == "8" && b.message.from == .agent)
        #expect(b.message.text == "hello \"there\"\né😀")
        #expect(b.message.at.timeIntervalSince1970 == TranscriptTime.parse("2026-11-29T10:00:01Z")!.timeIntervalSince1970 + 0.5)
        #expect(b.line == 2)
    }

    @Test func turnsShapeGetsTimestamps() throws {
        let r = try records("""
        {"id": "conv_0001", "turns": [{"role": "user", "content": "hi"}, {"role": "Agent", "content": "hello"}, {"role": "USER", "content": "refund"}]}

        {"id": 2, "turns": []}
        {"turns": [{"role": "assistant", "content": "x"}]}
        """, name: "data.jsonl", firstConversation: 10)
        #expect(r.count == 3)
        guard case let .conversation(c) = r[0], case let .conversation(d) = r[1], case let .conversation(e) = r[2] else {
            Issue.record("not conversations"); return
        }
        let start = TranscriptReader.Timeline.defaultStart
        #expect(c.id == "conv_0001" && c.line == 1)
        #expect(c.messages.map(\.message.from) == [.customer, .agent, .customer])
        #expect(c.messages.map(\.message.text) == ["hi", "hello", "refund"])
        // Conversation k starts k minutes after the start; turns are 30 seconds apart.
        #expect(c.messages.map { $0.message.at.timeIntervalSince(start) } == [600, 630, 660])
        #expect(c.messages.map(\.message.id) == ["conv_0001#1", "conv_0001#2", "conv_0001#3"])
        #expect(d.id == "2" && d.line == 3 && d.messages.isEmpty)
        #expect(e.id == "data.jsonl:4" && e.messages[0].message.at.timeIntervalSince(start) == 12 * 60)
        #expect(TranscriptReader.Timeline.defaultStart == TranscriptTime.parse("2026-11-30T10:00:00+08:00"))
    }

    @Test(arguments: [
        ("user", SenderRole.customer), ("User", .customer), ("CUSTOMER", .customer), ("client", .customer),
        ("agent", .agent), ("Agent", .agent), ("assistant", .agent), ("Human", .agent), ("operator", .agent), ("support", .agent),
        ("system", .system), ("bot", .bot),
    ])
    func roleMapping(_ name: String, _ role: SenderRole) throws {
        let r = try records(#"{"id":"c","turns":[{"role":"\#(name)","content":"x"}]}"#)
        guard case let .conversation(c) = r.first else { Issue.record("no conversation"); return }
        #expect(c.messages.first?.message.from == role)
        #expect(TranscriptReader.role(named: name) == role)
    }

    @Test func unknownRoleNamesFileLineColumnAndSuggests() throws {
        let e = try error("""
        {"id":"a","turns":[{"role":"user","content":"hi"}]}
        {"id":"b","turns":[{"role":"user","content":"hi"},{"role":"custmer","content":"again"}]}
        """, name: "chats.jsonl")
        #expect(e.code == "unknown-role")
        #expect(e.line == 2 && e.column == 59)
        #expect(e.isLineError)
        #expect(e.description.hasSuffix("chats.jsonl:2:59: error: [unknown-role] unknown role 'custmer'; did you mean 'customer'?"))
        let far = try error(#"{"id":"b","turns":[{"role":"wizard","content":"hi"}]}"#)
        #expect(far.message == "unknown role 'wizard' (known: customer, user, client, agent, assistant, human, operator, support, bot, system)")
        let from = try error(#"{"conversation":"c","at":"2026-11-29T10:00:00Z","from":"agnet","text":"x"}"#)
        #expect(from.message == "unknown role 'agnet'; did you mean 'agent'?" && from.column == 56)
    }

    @Test(arguments: [
        (#"{"conversation":"c","at":"2026-11-29T10:00:00Z","from":"customer","text":"hi",}"#, "bad-json", 79,
         "not valid JSON: trailing comma before '}'"),
        (#"{"conversation":"c","at":"2026-11-29T10:00:00Z","from":"customer","text":"hi"} x"#, "bad-json", 80,
         "not valid JSON: unexpected 'x' after the JSON value (one value per line)"),
        (#"{"conversation":"c","text":"unterminated}"#, "bad-json", 28, "not valid JSON: unterminated string (missing closing '\"')"),
        (#"{'conversation':"c"}"#, "bad-json", 2, "not valid JSON: expected a key in double quotes, found '''"),
        (#"{"conversation":"c","at":"2026-11-29T10:00:00Z","from":"customer","text":"a\qb"}"#, "bad-json", 76,
         #"not valid JSON: invalid escape '\q' in a string (valid: \" \\ \/ \b \f \n \r \t \uXXXX)"#),
        (#"{"conversation":"c","conversation":"d"}"#, "bad-json", 21, "not valid JSON: duplicate key 'conversation'"),
        (#"{"conversation":"c","at":"2026-11-29T10:00:00Z","from":"customer"}"#, "missing-key", 1, "missing \"text\""),
        (#"{"conversation":"c","at":"yesterday","from":"customer","text":"x"}"#, "bad-time", 26,
         "\"at\" must be an RFC 3339 time like 2026-11-29T10:00:00Z or 2026-11-29T18:00:00+08:00, got 'yesterday'"),
        (#"{"conversation":"c","at":"2026-02-30T10:00:00Z","from":"customer","text":"x"}"#, "bad-time", 26,
         "\"at\" must be an RFC 3339 time like 2026-11-29T10:00:00Z or 2026-11-29T18:00:00+08:00, got '2026-02-30T10:00:00Z'"),
        (#"{"conversation":"c","at":"2026-11-29T10:00:00Z","from":"customer","text":42}"#, "wrong-type", 74, "\"text\" must be a string, got a number"),
        (#"{"id":"c","turns":[{"role":"user"}]}"#, "missing-key", 20, "turn 1 has no \"content\""),
        (#"{"id":"c","turns":{"role":"user"}}"#, "wrong-type", 19, "\"turns\" must be an array of {\"role\", \"content\"}, got an object"),
        (#"["not", "an", "object"]"#, "bad-line", 1, "expected a JSON object ({…}) per line, got an array"),
        (#"{"text":"hi"}"#, "bad-line", 1,
         "a transcript line needs \"conversation\" (one message: {\"conversation\", \"id\", \"at\", \"from\", \"text\"}) or \"turns\" (a whole conversation: {\"id\", \"turns\": [{\"role\", \"content\"}]})"),
        ("{\"conversation\":\"é\",\"text\":\"tab\there\"}", "bad-json", 32,
         "not valid JSON: a tab inside a string must be escaped (\\t, \\n, \\r or \\uXXXX)"),
    ])
    func badLines(_ line: String, _ code: String, _ column: Int, _ message: String) throws {
        let e = try error("{\"id\":\"ok\",\"turns\":[]}\n\n" + line + "\n")
        #expect(e.code == code)
        #expect(e.message == message)
        #expect(e.line == 3)
        #expect(e.column == column)
        #expect(e.isLineError)
    }

    @Test func nestingIsLimited() throws {
        let deep = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        let e = try error(#"{"id":"c","turns":[],"x":"# + deep + "}")
        #expect(e.message == "not valid JSON: nested more than 64 levels deep")
    }

    @Test func carriageReturnsBlankLinesAndByteOrderMark() throws {
        let text = "\u{FEFF}{\"id\":\"a\",\"turns\":[{\"role\":\"user\",\"content\":\"hi\"}]}\r\n   \r\n\t\n{\"id\":\"b\",\"turns\":[]}"
        let r = try records(text)
        #expect(r.count == 2)
        if case let .conversation(b) = r[1] { #expect(b.line == 4) }
    }

    @Test func readingGoesOnAfterABadLine() throws {
        let dir = try replayScratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = try replayWrite(Array("{\"id\":\"a\",\"turns\":[]}\nnot json\n{\"id\":\"b\",\"turns\":[]}\n".utf8), "t.jsonl", in: dir)
        let reader = try TranscriptReader(path: path)
        #expect(try reader.next() != nil)
        #expect(throws: TranscriptError.self) { try reader.next() }
        guard case let .conversation(b)? = try reader.next() else { Issue.record("no record after the bad line"); return }
        #expect(b.id == "b" && b.line == 3)
        #expect(try reader.next() == nil)
    }

    @Test func longLinesAcrossBufferRefills() throws {
        // Lines longer than the 256 KiB read buffer, and many of them.
        let long = String(repeating: "é", count: 200_000)
        var text = ""
        for i in 0..<5 { text += "{\"id\":\"c\(i)\",\"turns\":[{\"role\":\"user\",\"content\":\"\(long)\"}]}\n" }
        let r = try records(text)
        #expect(r.count == 5)
        if case let .conversation(c) = r[4] { #expect(c.messages[0].message.text == long && c.line == 5) }
    }

    @Test func timestamps() {
        #expect(TranscriptTime.parse("2026-11-30T10:00:00+08:00") == TranscriptTime.parse("2026-11-30T02:00:00Z"))
        #expect(TranscriptTime.parse("2026-11-30t02:00:00z") == TranscriptTime.parse("2026-11-30 02:00:00Z"))
        #expect(TranscriptTime.parse("2026-11-30T02:00:00-0130")!.timeIntervalSince(TranscriptTime.parse("2026-11-30T02:00:00Z")!) == 5400)
        #expect(TranscriptTime.parse("2024-02-29T00:00:00Z") != nil)
        for bad in ["2026-11-30", "2026-11-30T02:00:00", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T02:00:00Zx", "x"] {
            #expect(TranscriptTime.parse(bad) == nil, "\(bad)")
        }
        let d = TranscriptTime.parse("1969-12-31T23:59:59.250Z")!
        #expect(TranscriptTime.format(d) == "1969-12-31T23:59:59.250Z")
        #expect(TranscriptTime.format(TranscriptReader.Timeline.defaultStart) == "2026-11-30T02:00:00Z")
    }

    @Test func missingFileAndFolder() throws {
        #expect(throws: TranscriptError.self) { try TranscriptReader(path: "/nonexistent/t.jsonl") }
        do {
            _ = try TranscriptReader(path: NSTemporaryDirectory())
            Issue.record("a folder opened as a transcript")
        } catch {
            #expect(error.code == "unreadable" && !error.isLineError)
        }
    }
}
