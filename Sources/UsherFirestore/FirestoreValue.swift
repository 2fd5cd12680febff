import Foundation
import UsherJSON

/// A Firestore field value as the REST API v1 writes it (`{"stringValue": "hi"}`,
/// `{"integerValue": "4"}`, …): what a document's fields hold, what a query compares.
enum FirestoreValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    /// RFC 3339 as Firestore wrote it; kept as text, so that a cursor sends back exactly what a
    /// query returned (a `Date` would round nanoseconds).
    case timestamp(String)
    case string(String)
    /// A document's full name (`projects/P/databases/D/documents/…`).
    case reference(String)
    case map([String: FirestoreValue])
    case array([FirestoreValue])

    var string: String? { if case let .string(s) = self { s } else { nil } }
    var bool: Bool? { if case let .bool(b) = self { b } else { nil } }
    var integer: Int64? {
        switch self {
        case let .integer(i): i
        case let .double(d) where d.rounded() == d && abs(d) < 9e15: Int64(d)
        default: nil
        }
    }
    var map: [String: FirestoreValue]? { if case let .map(m) = self { m } else { nil } }

    /// The value as a point in time: a timestamp, or a number of seconds (or milliseconds, with
    /// `millis`) since 1970, as a Realtime-Database-style app writes `date`.
    func date(millis: Bool = false) -> Date? {
        switch self {
        case let .timestamp(t): FirestoreTime.parse(t)
        case let .integer(i): Date(timeIntervalSince1970: millis ? Double(i) / 1000 : Double(i))
        case let .double(d): Date(timeIntervalSince1970: millis ? d / 1000 : d)
        default: nil
        }
    }

    /// Writes the value in the REST API's typed form.
    func write(into w: inout JSONWriter) {
        switch self {
        case .null: w.raw("{\"nullValue\":null}")
        case let .bool(b): w.raw("{\"booleanValue\":"); w.bool(b); w.byte(UInt8(ascii: "}"))
        case let .integer(i): w.raw("{\"integerValue\":\""); w.int(Int(i)); w.raw("\"}")
        case let .double(d): w.raw("{\"doubleValue\":"); w.double(d); w.byte(UInt8(ascii: "}"))
        case let .timestamp(t): w.raw("{\"timestampValue\":"); w.string(t); w.byte(UInt8(ascii: "}"))
        case let .string(s): w.raw("{\"stringValue\":"); w.string(s); w.byte(UInt8(ascii: "}"))
        case let .reference(r): w.raw("{\"referenceValue\":"); w.string(r); w.byte(UInt8(ascii: "}"))
        case let .map(fields):
            w.raw("{\"mapValue\":{\"fields\":")
            Self.write(fields: fields, into: &w)
            w.raw("}}")
        case let .array(items):
            w.raw("{\"arrayValue\":{\"values\":[")
            for (i, v) in items.enumerated() {
                if i > 0 { w.byte(UInt8(ascii: ",")) }
                v.write(into: &w)
            }
            w.raw("]}}")
        }
    }

    /// `{"name": value, …}`, names in sorted order (the same fields always write the same text).
    static func write(fields: [String: FirestoreValue], into w: inout JSONWriter) {
        w.byte(UInt8(ascii: "{"))
        for (i, name) in fields.keys.sorted().enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.string(name)
            w.byte(UInt8(ascii: ":"))
            fields[name]!.write(into: &w)
        }
        w.byte(UInt8(ascii: "}"))
    }

    /// Reads a typed value (`{"stringValue": …}`); a kind this adapter does not use (bytes, a
    /// geo point) reads as its JSON text, so a document with one is still read.
    init(_ json: JSONValue) throws {
        guard case let .object(members) = json.kind, let (kind, v) = members.first.map({ ($0.key, $0.value) }) else {
            throw FirestoreError.malformed("a field value is \(json.typeName), not a typed value")
        }
        switch (kind, v.kind) {
        case ("nullValue", _): self = .null
        case let ("booleanValue", .bool(b)): self = .bool(b)
        case let ("integerValue", .string(s)), let ("integerValue", .number(s)):
            guard let i = Int64(s) else { throw FirestoreError.malformed("integerValue '\(s)'") }
            self = .integer(i)
        case let ("doubleValue", .number(s)):
            self = .double(Double(s) ?? 0)
        case let ("doubleValue", .string(s)):   // "NaN", "Infinity"
            self = .double(Double(s) ?? .nan)
        case let ("timestampValue", .string(s)): self = .timestamp(s)
        case let ("stringValue", .string(s)): self = .string(s)
        case let ("referenceValue", .string(s)): self = .reference(s)
        case ("mapValue", _):
            self = .map(try Self.fields(v["fields"]))
        case ("arrayValue", _):
            if case let .array(items)? = v["values"]?.kind { self = .array(try items.map(FirestoreValue.init)) } else { self = .array([]) }
        case let (_, .string(s)): self = .string(s)
        default: self = .null
        }
    }

    /// A `fields` object (absent: no fields).
    static func fields(_ json: JSONValue?) throws -> [String: FirestoreValue] {
        guard let json else { return [:] }
        guard case let .object(members) = json.kind else { throw FirestoreError.malformed("fields are \(json.typeName)") }
        var fields: [String: FirestoreValue] = [:]
        fields.reserveCapacity(members.count)
        for m in members { fields[m.key] = try FirestoreValue(m.value) }
        return fields
    }
}

/// A document as the REST API returns it.
struct FirestoreDocument: Sendable {
    /// Full name: `projects/P/databases/D/documents/conversations/u1/messages/m1`.
    var name: String
    var fields: [String: FirestoreValue]
    /// The precondition a write of this document gives to succeed only if no one wrote it since.
    var updateTime: String
    var createTime: String

    init(name: String, fields: [String: FirestoreValue], updateTime: String = "", createTime: String = "") {
        self.name = name
        self.fields = fields
        self.updateTime = updateTime
        self.createTime = createTime
    }

    init(_ json: JSONValue) throws {
        guard case let .string(name)? = json["name"]?.kind else { throw FirestoreError.malformed("a document without a name") }
        self.name = name
        fields = try FirestoreValue.fields(json["fields"])
        if case let .string(t)? = json["updateTime"]?.kind { updateTime = t } else { updateTime = "" }
        if case let .string(t)? = json["createTime"]?.kind { createTime = t } else { createTime = "" }
    }

    /// The last segment of the name: the document's id in its collection.
    var id: String { Self.lastSegment(name) }

    /// The id of the document this one's collection belongs to (`u1` for
    /// `…/conversations/u1/messages/m1`); nil for a top-level document.
    var parentID: String? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count >= 4 ? String(parts[parts.count - 3]) : nil
    }

    static func lastSegment(_ name: String) -> String {
        name.lastIndex(of: "/").map { String(name[name.index(after: $0)...]) } ?? name
    }
}

/// Timestamps as Firestore writes them: RFC 3339 in UTC, up to nanoseconds.
enum FirestoreTime {
    /// `2026-12-05T10:00:01.123456Z`: microseconds, the precision Firestore stores.
    static func format(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let seconds = Int64((micros / 1_000_000).rounded(.down))
        let fraction = Int64(micros) - seconds * 1_000_000
        var t = time_t(seconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ v: Int32, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        let f = String(fraction)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2))."
            + String(repeating: "0", count: 6 - f.count) + f + "Z"
    }

    /// Reads RFC 3339 (`Z` or an offset, any number of fraction digits); nil if it is not.
    static func parse(_ text: String) -> Date? {
        let u = Array(text.utf8)
        guard u.count >= 20 else { return nil }
        func num(_ from: Int, _ n: Int) -> Int? {
            guard from + n <= u.count else { return nil }
            var v = 0
            for i in from..<(from + n) {
                guard (48...57).contains(u[i]) else { return nil }
                v = v * 10 + Int(u[i] - 48)
            }
            return v
        }
        guard let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
              let s = num(17, 2) else { return nil }
        var i = 19
        var fraction = 0.0
        if i < u.count, u[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            while i < u.count, (48...57).contains(u[i]) {
                fraction += Double(u[i] - 48) * scale
                scale /= 10
                i += 1
            }
        }
        var offset = 0
        guard i < u.count else { return nil }
        if u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-"), let oh = num(i + 1, 2), let om = num(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (u[i] == UInt8(ascii: "+") ? 1 : -1)
        } else if u[i] != UInt8(ascii: "Z") && u[i] != UInt8(ascii: "z") {
            return nil
        }
        var parts = tm()
        parts.tm_year = Int32(y - 1900)
        parts.tm_mon = Int32(mo - 1)
        parts.tm_mday = Int32(d)
        parts.tm_hour = Int32(h)
        parts.tm_min = Int32(mi)
        parts.tm_sec = Int32(s)
        let seconds = timegm(&parts)
        return Date(timeIntervalSince1970: Double(seconds - offset) + fraction)
    }
}
