public import Foundation
public import UsherEngine
import UsherDiagnostics
import UsherJSON

/// Reads a transcript file line by line, plain or gzip-compressed, in either shape of
/// `TranscriptFormat` (decided per line), without reading the file into memory.
///
/// A bad line throws a `TranscriptError` with `isLineError == true` naming file, line and
/// column; the next call to `next()` carries on with the following line, so a caller can choose
/// to stop or to skip. Errors about the file itself (cannot open, corrupt gzip) are not line
/// errors: reading cannot go on.
public final class TranscriptReader {
    /// How the chat-dataset shape, which has no timestamps, gets them.
    public struct Timeline: Sendable, Hashable {
        /// When conversation 0 starts.
        public var start: Date
        /// Conversation *k* (counted over every `turns` line of the replay, from 0) starts at
        /// `start + k × conversationSpacing`.
        public var conversationSpacing: TimeInterval
        /// Turn *j* of a conversation (from 0) is at its start `+ j × turnSpacing`.
        public var turnSpacing: TimeInterval

        /// Monday 2026-11-30 10:00 in Shanghai (02:00 UTC): the start of a reader's own
        /// default timeline. A replay starts at that hour in its bot's zone (`defaultStart(in:)`).
        public static let defaultStart = Date(timeIntervalSince1970: 1_796_004_000)

        /// Monday 2026-11-30 10:00 in `timeZone`: a working morning wherever the bot is.
        public static func defaultStart(in timeZone: TimeZone) -> Date {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            return calendar.date(from: DateComponents(year: 2026, month: 11, day: 30, hour: 10))!
        }

        /// Conversation *k* at `start + k × conversationSpacing`, turns `turnSpacing` apart.
        public init(start: Date = defaultStart, conversationSpacing: TimeInterval = 60, turnSpacing: TimeInterval = 30) {
            self.start = start
            self.conversationSpacing = conversationSpacing
            self.turnSpacing = turnSpacing
        }
    }

    /// Role names (case-insensitive) and who they are. `from` in the events shape and `role` in
    /// the turns shape accept the same names.
    public static let roles: [(name: String, role: SenderRole)] = [
        ("customer", .customer), ("user", .customer), ("client", .customer),
        ("agent", .agent), ("assistant", .agent), ("human", .agent), ("operator", .agent), ("support", .agent),
        ("bot", .bot),
        ("system", .system),
    ]

    /// The file as the user named it.
    public let path: String
    /// How `turns` conversations get their times.
    public let timeline: Timeline
    /// How many `turns` conversations got times so far, counting those of earlier files: the
    /// next one is conversation number `conversationIndex`.
    public private(set) var conversationIndex: Int
    private let lines: TranscriptLineReader
    private let displayName: String

    /// Opens `path` (`-` for standard input).
    public init(path: String, timeline: Timeline = .init(), firstConversationIndex: Int = 0) throws(TranscriptError) {
        self.path = path
        self.timeline = timeline
        self.conversationIndex = firstConversationIndex
        self.lines = try TranscriptLineReader(path: path)
        self.displayName = path == "-" ? "stdin" : (path.split(separator: "/").last.map(String.init) ?? path)
    }

    /// The number of the line last read (1-based).
    public var line: Int { lines.lineNumber }
    /// Bytes of the file consumed so far (compressed bytes for gzip), for progress.
    public var bytesRead: Int { lines.bytesRead }
    /// The size of the file, when it is a regular file.
    public var fileSize: Int? { lines.fileSize }
    /// Whether the file is gzip-compressed.
    public var isGzip: Bool { lines.isGzip }

    /// The next record, skipping blank lines; `nil` at the end of the file.
    public func next() throws(TranscriptError) -> TranscriptRecord? {
        while let bytes = try lines.nextLine() {
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            return try decode(bytes)
        }
        return nil
    }

    // MARK: Decoding one line

    private func fail(_ code: String, _ message: String, _ bytes: UnsafeBufferPointer<UInt8>, at offset: Int?) -> TranscriptError {
        TranscriptError(code, message, file: path, line: lines.lineNumber, column: offset.map { JSONReader.column(ofOffset: $0, in: bytes) })
    }

    private func decode(_ bytes: UnsafeBufferPointer<UInt8>) throws(TranscriptError) -> TranscriptRecord {
        let root: JSONValue
        do {
            root = try JSONReader.parse(bytes)
        } catch {
            throw fail("bad-json", "not valid JSON: \(error.message)", bytes, at: error.offset)
        }
        guard case .object = root.kind else {
            throw fail("bad-line", "expected a JSON object ({…}) per line, got \(root.typeName)", bytes, at: root.offset)
        }
        if let turns = root["turns"] ?? root["messages"] {
            return .conversation(try conversation(root, turns, bytes))
        }
        if root["conversation"] != nil {
            return .event(try event(root, bytes))
        }
        throw fail("bad-line", "a transcript line needs \"conversation\" (one message: {\"conversation\", \"id\", \"at\", \"from\", \"text\"}) or \"turns\" (a whole conversation: {\"id\", \"turns\": [{\"role\", \"content\"}]})", bytes, at: root.offset)
    }

    /// A string member, or a number written as one (`"id": 42`).
    private func text(_ v: JSONValue?, _ key: String, required: Bool, numbers: Bool = false, _ bytes: UnsafeBufferPointer<UInt8>,
                      in object: JSONValue) throws(TranscriptError) -> String? {
        guard let v else {
            if required { throw fail("missing-key", "missing \"\(key)\"", bytes, at: object.offset) }
            return nil
        }
        switch v.kind {
        case let .string(s): return s
        case let .number(n) where numbers: return n
        case .null where !required: return nil
        default:
            throw fail("wrong-type", "\"\(key)\" must be a string\(numbers ? " or a number" : ""), got \(v.typeName)", bytes, at: v.offset)
        }
    }

    private func role(_ v: JSONValue, key: String, _ bytes: UnsafeBufferPointer<UInt8>) throws(TranscriptError) -> SenderRole {
        guard case let .string(name) = v.kind else {
            throw fail("wrong-type", "\"\(key)\" must be a string, got \(v.typeName)", bytes, at: v.offset)
        }
        if let role = Self.role(named: name) { return role }
        let names = Self.roles.map(\.name)
        let hint = Suggestion.closest(to: name, in: names).map { "; did you mean '\($0)'?" }
            ?? " (known: \(names.joined(separator: ", ")))"
        throw fail("unknown-role", "unknown role '\(name)'\(hint)", bytes, at: v.offset)
    }

    /// The role a name stands for, case-insensitively.
    public static func role(named name: String) -> SenderRole? {
        for r in roles where r.name == name { return r.role }
        let lower = name.lowercased()
        for r in roles where r.name == lower { return r.role }
        return nil
    }

    private func event(_ o: JSONValue, _ bytes: UnsafeBufferPointer<UInt8>) throws(TranscriptError) -> TranscriptMessage {
        let conversation = try text(o["conversation"], "conversation", required: true, numbers: true, bytes, in: o)!
        let id = try text(o["id"], "id", required: false, numbers: true, bytes, in: o) ?? "\(displayName):\(lines.lineNumber)"
        guard let fromValue = o["from"] else { throw fail("missing-key", "missing \"from\" (customer, agent, bot or system)", bytes, at: o.offset) }
        let from = try role(fromValue, key: "from", bytes)
        guard let atValue = o["at"] else { throw fail("missing-key", "missing \"at\" (a time like 2026-11-29T10:00:00Z)", bytes, at: o.offset) }
        let at: Date
        switch atValue.kind {
        case let .string(s):
            guard let d = TranscriptTime.parse(s) else {
                throw fail("bad-time", "\"at\" must be an RFC 3339 time like 2026-11-29T10:00:00Z or 2026-11-29T18:00:00+08:00, got '\(s)'", bytes, at: atValue.offset)
            }
            at = d
        case let .number(n):
            guard let seconds = Double(n) else { throw fail("bad-time", "\"at\" is not a number of seconds: \(n)", bytes, at: atValue.offset) }
            at = Date(timeIntervalSince1970: seconds)
        default:
            throw fail("wrong-type", "\"at\" must be a time string or seconds since 1970, got \(atValue.typeName)", bytes, at: atValue.offset)
        }
        let body = try text(o["text"], "text", required: true, bytes, in: o)!
        let message = Message(id: id, conversationID: conversation, from: from,
                              senderID: try text(o["sender_id"], "sender_id", required: false, numbers: true, bytes, in: o),
                              senderName: try text(o["sender_name"], "sender_name", required: false, bytes, in: o),
                              text: body, at: at)
        return TranscriptMessage(message: message, line: lines.lineNumber,
                                 channel: try text(o["channel"], "channel", required: false, bytes, in: o),
                                 locale: try text(o["locale"], "locale", required: false, bytes, in: o))
    }

    private func conversation(_ o: JSONValue, _ turns: JSONValue, _ bytes: UnsafeBufferPointer<UInt8>) throws(TranscriptError) -> TranscriptConversation {
        let key = o["turns"] != nil ? "turns" : "messages"
        let id = try text(o["id"], "id", required: false, numbers: true, bytes, in: o) ?? "\(displayName):\(lines.lineNumber)"
        guard case let .array(items) = turns.kind else {
            throw fail("wrong-type", "\"\(key)\" must be an array of {\"role\", \"content\"}, got \(turns.typeName)", bytes, at: turns.offset)
        }
        let channel = try text(o["channel"], "channel", required: false, bytes, in: o)
        let locale = try text(o["locale"], "locale", required: false, bytes, in: o)
        let begins = timeline.start.addingTimeInterval(Double(conversationIndex) * timeline.conversationSpacing)
        var messages: [TranscriptMessage] = []
        messages.reserveCapacity(items.count)
        let customerID = "customer:" + id
        let idPrefix = id + "#"
        for (j, turn) in items.enumerated() {
            guard case .object = turn.kind else {
                throw fail("wrong-type", "turn \(j + 1) must be an object {\"role\", \"content\"}, got \(turn.typeName)", bytes, at: turn.offset)
            }
            guard let roleValue = turn["role"] else { throw fail("missing-key", "turn \(j + 1) has no \"role\"", bytes, at: turn.offset) }
            let from = try role(roleValue, key: "role", bytes)
            guard let contentValue = turn["content"] ?? turn["text"] else {
                throw fail("missing-key", "turn \(j + 1) has no \"content\"", bytes, at: turn.offset)
            }
            guard case let .string(content) = contentValue.kind else {
                throw fail("wrong-type", "\"content\" of turn \(j + 1) must be a string, got \(contentValue.typeName)", bytes, at: contentValue.offset)
            }
            let m = Message(id: idPrefix + String(j + 1), conversationID: id, from: from,
                            senderID: from == .customer ? customerID : nil,
                            senderName: nil, text: content,
                            at: begins.addingTimeInterval(Double(j) * timeline.turnSpacing))
            messages.append(TranscriptMessage(message: m, line: lines.lineNumber))
        }
        conversationIndex += 1
        return TranscriptConversation(id: id, line: lines.lineNumber, channel: channel, locale: locale, messages: messages)
    }
}
