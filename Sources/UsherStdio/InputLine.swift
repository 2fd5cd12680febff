import Foundation
import UsherEngine
import UsherJSON
import UsherStore

/// One line of input: a transcript event (DESIGN.md §5) or a close event.
///
///     {"conversation":"c-42","id":"m-1","at":"2026-11-29T10:00:00Z","from":"customer","sender_id":"u-7","sender_name":"Pooja","text":"hi"}
///     {"conversation":"c-42","event":"close"}
///
/// `conversation` is required, and `text` for messages; `from` defaults to `customer`, `at` to
/// now (an ISO 8601 time, or seconds since 1970), `id` to one derived from the line's number
/// and content (so feeding the same input again after a restart appends nothing twice — give
/// real ids when lines can move). `channel` and `locale` set the conversation's fields. Unknown
/// keys are ignored.
enum InputLine {
    struct Malformed: Error {
        var message: String
    }

    /// The message a line describes, or `Malformed` saying what is wrong with it.
    static func parse(_ bytes: ArraySlice<UInt8>, number: Int, source: String, now: Date) throws(Malformed) -> NewMessage {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Malformed(message: "not valid UTF-8")
        }
        guard text.first(where: { !$0.isWhitespace }) == "{" else {
            throw Malformed(message: "expected a JSON object, one per line")
        }
        let object: [String: Any]
        do {
            guard let o = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
                throw Malformed(message: "expected a JSON object, one per line")
            }
            object = o
        } catch let error as Malformed {
            throw error
        } catch {
            throw Malformed(message: "invalid JSON (\(Self.reason(error)))")
        }

        func string(_ key: String, required: Bool = false) throws(Malformed) -> String? {
            switch object[key] {
            case nil, is NSNull:
                if required { throw Malformed(message: "missing \"\(key)\"") }
                return nil
            case let s as String:
                if required && s.isEmpty { throw Malformed(message: "\"\(key)\" is empty") }
                return s
            default:
                throw Malformed(message: "\"\(key)\" must be a string")
            }
        }

        let conversation = try string("conversation", required: true)!
        let id: String
        switch object["id"] {
        case nil, is NSNull: id = "\(source)-\(number)-\(String(FNV1a.hash(bytes), radix: 16))"
        case let s as String where !s.isEmpty: id = s
        default: throw Malformed(message: "\"id\" must be a non-empty string")
        }
        let at: Date
        switch object["at"] {
        case nil, is NSNull: at = now
        case let s as String:
            guard let d = Self.date(s) else {
                throw Malformed(message: "\"at\" is not an ISO 8601 time like 2026-11-29T10:00:00Z: '\(s.prefix(40))'")
            }
            at = d
        case let n as NSNumber where n.doubleValue.isFinite:
            at = Date(timeIntervalSince1970: n.doubleValue)
        default: throw Malformed(message: "\"at\" must be an ISO 8601 time or seconds since 1970")
        }
        let channel = try string("channel")
        let locale = try string("locale")

        if let event = try string("event") {
            guard event == "close" else {
                throw Malformed(message: "unknown event '\(event.prefix(40))'; the only event is \"close\"")
            }
            return NewMessage(id: id, conversationID: conversation, kind: .close, from: .system, text: "", at: at,
                              channel: channel, locale: locale)
        }
        let fromText = try string("from") ?? "customer"
        guard let from = SenderRole(rawValue: fromText.lowercased()) else {
            throw Malformed(message: "\"from\" is '\(fromText.prefix(40))'; expected customer, agent, bot or system")
        }
        guard let body = try string("text") else { throw Malformed(message: "missing \"text\"") }
        return NewMessage(id: id, conversationID: conversation, from: from, senderID: try string("sender_id"),
                          senderName: try string("sender_name"), text: body, at: at, channel: channel, locale: locale)
    }

    static func date(_ s: String) -> Date? {
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(s) { return d }
        if let d = try? Date.ISO8601FormatStyle().parse(s) { return d }
        return nil
    }

    private static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        if let detail = ns.userInfo[NSDebugDescriptionErrorKey] as? String { return detail }
        return ns.localizedDescription
    }
}
