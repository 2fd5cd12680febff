/// One JSON value of a transcript line, with the byte offset where it starts in the line (for
/// error columns).
struct JSONLineValue: Sendable {
    enum Kind: Sendable {
        /// Members in the order written; keys are unique (duplicates are an error).
        case object([(key: String, value: JSONLineValue)])
        case array([JSONLineValue])
        case string(String)
        /// The number as written, so that `"id": 42` reads back as `42`.
        case number(String)
        case bool(Bool)
        case null
    }

    var kind: Kind
    /// Byte offset of the value's first byte in the line.
    var offset: Int

    /// The member named `key` of an object, else `nil`.
    subscript(key: String) -> JSONLineValue? {
        guard case let .object(members) = kind else { return nil }
        for m in members where m.key == key { return m.value }
        return nil
    }

    /// What kind of value this is, for error messages ("expected a string, got a number").
    var typeName: String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "true or false"
        case .null: "null"
        }
    }
}

/// A line that is not valid JSON: what is wrong, and the byte offset where it was noticed.
struct JSONLineError: Error, Sendable {
    var message: String
    var offset: Int
}

/// A small, strict JSON parser for one line of a transcript (RFC 8259): no trailing commas, no
/// comments, no duplicate keys, at most 64 levels of nesting. It works on the raw bytes of the
/// line, and only allocates the strings it returns, and it knows the column of every mistake.
/// Measured on the 5,000 conversations of the cucom data set: `JSONSerialization` takes about
/// 300 ms to parse the lines alone, the whole read path here (gunzip, parse, messages) about
/// 100 ms. Invalid UTF-8 inside a string becomes U+FFFD.
struct JSONLineParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var i = 0
    private var depth = 0
    static let maxDepth = 64

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses one complete JSON value (surrounding whitespace allowed).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONLineError) -> JSONLineValue {
        var p = JSONLineParser(bytes)
        p.skipSpace()
        guard p.i < bytes.count else { throw JSONLineError(message: "the line has no JSON value", offset: 0) }
        let v = try p.value()
        p.skipSpace()
        if p.i < bytes.count {
            throw JSONLineError(message: "unexpected \(p.describe(p.i)) after the JSON value (one value per line)", offset: p.i)
        }
        return v
    }

    private mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private mutating func value() throws(JSONLineError) -> JSONLineValue {
        guard i < bytes.count else { throw JSONLineError(message: "the line ends in the middle of a JSON value", offset: i) }
        let start = i
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return JSONLineValue(kind: .string(try string()), offset: start)
        case UInt8(ascii: "t"): try literal("true"); return JSONLineValue(kind: .bool(true), offset: start)
        case UInt8(ascii: "f"): try literal("false"); return JSONLineValue(kind: .bool(false), offset: start)
        case UInt8(ascii: "n"): try literal("null"); return JSONLineValue(kind: .null, offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        case UInt8(ascii: "'"):
            throw JSONLineError(message: "strings need double quotes (\"…\"), not single quotes", offset: i)
        default:
            throw JSONLineError(message: "expected a JSON value, found \(describe(i))", offset: i)
        }
    }

    private mutating func enter() throws(JSONLineError) {
        depth += 1
        if depth > Self.maxDepth {
            throw JSONLineError(message: "nested more than \(Self.maxDepth) levels deep", offset: i)
        }
    }

    private mutating func object() throws(JSONLineError) -> JSONLineValue {
        let start = i
        try enter()
        i += 1
        var members: [(key: String, value: JSONLineValue)] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return JSONLineValue(kind: .object(members), offset: start)
        }
        while true {
            skipSpace()
            guard i < bytes.count else { throw JSONLineError(message: "the line ends inside an object (missing '}')", offset: i) }
            guard bytes[i] == UInt8(ascii: "\"") else {
                if bytes[i] == UInt8(ascii: "}") { throw JSONLineError(message: "trailing comma before '}'", offset: i) }
                throw JSONLineError(message: "expected a key in double quotes, found \(describe(i))", offset: i)
            }
            let keyOffset = i
            let key = try string()
            if members.contains(where: { $0.key == key }) {
                throw JSONLineError(message: "duplicate key '\(key)'", offset: keyOffset)
            }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else {
                throw JSONLineError(message: "expected ':' after the key '\(key)', found \(describe(i))", offset: i)
            }
            i += 1
            skipSpace()
            members.append((key, try value()))
            skipSpace()
            guard i < bytes.count else { throw JSONLineError(message: "the line ends inside an object (missing '}')", offset: i) }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; break }
            throw JSONLineError(message: "expected ',' or '}' after a member, found \(describe(i))", offset: i)
        }
        depth -= 1
        return JSONLineValue(kind: .object(members), offset: start)
    }

    private mutating func array() throws(JSONLineError) -> JSONLineValue {
        let start = i
        try enter()
        i += 1
        var items: [JSONLineValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return JSONLineValue(kind: .array(items), offset: start)
        }
        while true {
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { throw JSONLineError(message: "trailing comma before ']'", offset: i) }
            items.append(try value())
            skipSpace()
            guard i < bytes.count else { throw JSONLineError(message: "the line ends inside an array (missing ']')", offset: i) }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; break }
            throw JSONLineError(message: "expected ',' or ']' after an array item, found \(describe(i))", offset: i)
        }
        depth -= 1
        return JSONLineValue(kind: .array(items), offset: start)
    }

    private mutating func literal(_ word: StaticString) throws(JSONLineError) {
        let start = i
        let n = word.utf8CodeUnitCount
        guard start + n <= bytes.count else { throw JSONLineError(message: "expected a JSON value, found \(describe(start))", offset: start) }
        let p = word.utf8Start
        for k in 0..<n where bytes[start + k] != p[k] {
            throw JSONLineError(message: "expected a JSON value, found \(describe(start))", offset: start)
        }
        i += n
    }

    private mutating func number() throws(JSONLineError) -> JSONLineValue {
        let start = i
        func digits() -> Int {
            let s = i
            while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
            return i - s
        }
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        let n = digits()
        guard n > 0 else { throw JSONLineError(message: "a number needs digits after '-'", offset: i) }
        if n > 1, bytes[intStart] == UInt8(ascii: "0") {
            throw JSONLineError(message: "numbers do not start with 0 (write \"…\" for ids with leading zeros)", offset: intStart)
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { throw JSONLineError(message: "a number needs digits after '.'", offset: i) }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw JSONLineError(message: "a number needs digits in its exponent", offset: i) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
        return JSONLineValue(kind: .number(text), offset: start)
    }

    /// A string starting at the opening quote; leaves `i` after the closing quote.
    private mutating func string() throws(JSONLineError) -> String {
        let open = i
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
                i += 1
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw controlCharacter(b) }
            i += 1
        }
        guard i < bytes.count else { throw JSONLineError(message: "unterminated string (missing closing '\"')", offset: open) }
        var out = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<i]))
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b < 0x20 { throw controlCharacter(b) }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            let escape = i
            i += 1
            guard i < bytes.count else { break }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4(at: escape)
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate must be followed by \u and a low surrogate.
                    if i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                        let save = i
                        i += 2
                        let low = try hex4(at: save)
                        if (0xDC00...0xDFFF).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            i = save
                            scalar = 0xFFFD
                        }
                    } else {
                        scalar = 0xFFFD
                    }
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    scalar = 0xFFFD
                }
                out.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
            default:
                throw JSONLineError(message: "invalid escape '\\\(Self.printable(e))' in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", offset: escape)
            }
        }
        throw JSONLineError(message: "unterminated string (missing closing '\"')", offset: open)
    }

    /// The four hex digits after `\u` (with `i` at the first digit).
    private mutating func hex4(at escape: Int) throws(JSONLineError) -> UInt32 {
        guard i + 4 <= bytes.count else { throw JSONLineError(message: "'\\u' needs four hex digits", offset: escape) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw JSONLineError(message: "'\\u' needs four hex digits", offset: escape)
            }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    private func controlCharacter(_ b: UInt8) -> JSONLineError {
        let name = b == 0x09 ? "a tab" : b == 0x0A ? "a line break" : b == 0x0D ? "a carriage return" : "control character U+00\(String(b, radix: 16, uppercase: true).count == 1 ? "0" : "")\(String(b, radix: 16, uppercase: true))"
        return JSONLineError(message: "\(name) inside a string must be escaped (\\t, \\n, \\r or \\uXXXX)", offset: i)
    }

    /// `'x'` for a printable ASCII byte, else a description.
    private func describe(_ at: Int) -> String {
        guard at < bytes.count else { return "the end of the line" }
        let b = bytes[at]
        return b >= 0x20 && b < 0x7F ? "'\(Self.printable(b))'" : b >= 0x80 ? "a non-ASCII character" : "control character 0x\(String(b, radix: 16))"
    }

    private static func printable(_ b: UInt8) -> String { String(UnicodeScalar(b)) }
}
