public import Foundation
import UsherEngine
public import UsherJSON
public import UsherStore

/// One line of input: a transcript event (DESIGN.md §5) or a close event.
///
///     {"conversation":"c-42","id":"m-1","at":"2026-11-29T10:00:00Z","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"hi"}
///     {"conversation":"c-42","event":"close"}
///
/// `conversation` is required, and `text` for messages; `from` defaults to `customer`, `at` to
/// now (an ISO 8601 time, or seconds since 1970), `id` to one derived from the line's number
/// and content (so feeding the same input again after a restart appends nothing twice — give
/// real ids when lines can move). `channel` and `locale` set the conversation's fields. Unknown
/// keys are ignored; a key given twice is an error naming it. A line may start with a UTF-8
/// byte-order mark. The JSON is read by the project's one reader (strict, nested at most 64
/// levels deep), which says where a line stops being JSON. The webhook takes the same objects
/// (`message(_:defaultID:now:)`).
public enum InputLine {
    public struct Malformed: Error {
        public var message: String
        /// Where in the line, for JSON that does not parse (1-based, in Unicode scalars).
        public var column: Int?
        /// The key whose value is wrong or missing, when one is.
        public var field: String?
        init(message: String, column: Int? = nil, field: String? = nil) {
            self.message = message
            self.column = column
            self.field = field
        }
    }

    /// The message a line describes, or `Malformed` saying what is wrong with it.
    static func parse(_ line: ArraySlice<UInt8>, number: Int, source: String, now: Date) throws(Malformed) -> NewMessage {
        // A byte-order mark (Windows tools write one at the start of a file) is not part of the
        // JSON; nor of the line's id, so the same line gets the same id with or without one.
        let bytes = line.starts(with: [0xEF, 0xBB, 0xBF]) ? line.dropFirst(3) : line
        // The JSON reader turns invalid UTF-8 into U+FFFD; a line fed to the store must not.
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw Malformed(message: "not valid UTF-8")
        }
        guard bytes.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) == UInt8(ascii: "{") else {
            throw Malformed(message: "expected a JSON object, one per line")
        }
        let parsed: Result<JSONValue, Malformed> = bytes.withUnsafeBufferPointer { b in
            do throws(JSONError) {
                return .success(try JSONReader.parse(b))
            } catch {
                return .failure(Malformed(message: "invalid JSON: \(error.message)",
                                          column: JSONReader.column(ofOffset: error.offset, in: b)))
            }
        }
        let object = try parsed.get()
        return try message(object, defaultID: "\(source)-\(number)-\(String(FNV1a.hash(bytes), radix: 16))", now: now)
    }

    /// The message a JSON object describes (one line's, or one of a webhook request's), or
    /// `Malformed` naming the key that is wrong. `defaultID`: the id when the object has none
    /// (nil: `id` is required).
    public static func message(_ object: JSONValue, defaultID: String?, now: Date) throws(Malformed) -> NewMessage {
        guard case .object = object.kind else { throw Malformed(message: "expected a JSON object") }

        func string(_ key: String, required: Bool = false) throws(Malformed) -> String? {
            switch object[key]?.kind {
            case nil, .null?:
                if required { throw Malformed(message: "missing \"\(key)\"", field: key) }
                return nil
            case let .string(s)?:
                if required && s.isEmpty { throw Malformed(message: "\"\(key)\" is empty", field: key) }
                return s
            default:
                throw Malformed(message: "\"\(key)\" must be a string", field: key)
            }
        }

        let conversation = try string("conversation", required: true)!
        let id: String
        switch object["id"]?.kind {
        case nil, .null?:
            guard let defaultID else {
                throw Malformed(message: "missing \"id\": each message needs its own, so that sending it again stores it once",
                                field: "id")
            }
            id = defaultID
        case let .string(s)? where !s.isEmpty: id = s
        default: throw Malformed(message: "\"id\" must be a non-empty string", field: "id")
        }
        let at: Date
        switch object["at"]?.kind {
        case nil, .null?: at = now
        case let .string(s)?:
            guard let d = Self.date(s) else {
                throw Malformed(message: "\"at\" is not an ISO 8601 time like 2026-11-29T10:00:00Z: '\(s.prefix(40))'", field: "at")
            }
            at = d
        case let .number(n)?:
            guard let seconds = Double(n), seconds.isFinite else {
                throw Malformed(message: "\"at\" must be an ISO 8601 time or seconds since 1970", field: "at")
            }
            at = Date(timeIntervalSince1970: seconds)
        default: throw Malformed(message: "\"at\" must be an ISO 8601 time or seconds since 1970", field: "at")
        }
        let channel = try string("channel")
        let locale = try string("locale")

        if let event = try string("event") {
            guard event == "close" else {
                throw Malformed(message: "unknown event '\(event.prefix(40))'; the only event is \"close\"", field: "event")
            }
            return NewMessage(id: id, conversationID: conversation, kind: .close, from: .system, text: "", at: at,
                              channel: channel, locale: locale)
        }
        let fromText = try string("from") ?? "customer"
        guard let from = SenderRole(rawValue: fromText.lowercased()) else {
            throw Malformed(message: "\"from\" is '\(fromText.prefix(40))'; expected customer, agent, bot or system", field: "from")
        }
        guard let body = try string("text") else { throw Malformed(message: "missing \"text\"", field: "text") }
        return NewMessage(id: id, conversationID: conversation, from: from, senderID: try string("sender_id"),
                          senderName: try string("sender_name"), text: body, at: at, channel: channel, locale: locale)
    }

    /// An ISO 8601 time, with or without fractions of a second (`2026-11-29T10:00:00.250Z`).
    public static func date(_ s: String) -> Date? {
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(s) { return d }
        if let d = try? Date.ISO8601FormatStyle().parse(s) { return d }
        return nil
    }
}
