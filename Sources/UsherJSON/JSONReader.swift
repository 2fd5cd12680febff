/// Reads JSON text (RFC 8259) from bytes, strictly: no trailing commas, comments, single
/// quotes or leading zeros, at most `maxDepth` levels of nesting. It works on the raw bytes and
/// allocates only the strings it returns. Two ways to read, one grammar:
///
/// - value by value, for shapes known in advance (`object(keys:)`, `string()`, `int()`, …):
///   a stored `ConversationState` reads this way in about 1 µs, where `JSONDecoder` takes
///   about 20 µs;
/// - `parse(_:)`, a whole text as a `JSONValue` tree with the offset of every value: measured
///   on the 5,000 conversations of the cucom data set, `JSONSerialization` takes about 300 ms
///   to parse the lines alone, the whole transcript read path (gunzip, parse, messages) about
///   50 ms with this reader (`usher-bench --only replay`, "read only").
///
/// Every mistake throws a `JSONError` with a message for people and its byte offset. The
/// messages call the text "the line": every text whose errors people see is one line of JSON
/// Lines (transcripts). Invalid UTF-8 inside a string, and a lone UTF-16 surrogate escape,
/// become U+FFFD.
public struct JSONReader {
    /// Deeper nesting is an error (it would only come from a broken or hostile file).
    public static let maxDepth = 64

    // Public and inlinable (with what they use): a store reads a state member by member, and a
    // call per value cost about a third of the read. Swift 6.3 does not inline `@inlinable
    // package` code into other modules (measured 2026-12-05), hence `public`.
    @usableFromInline let buf: UnsafeBufferPointer<UInt8>
    @usableFromInline var i = 0
    @usableFromInline var depth = 0

    /// A reader at the start of `buf`, which must outlive it.
    @inlinable
    public init(_ buf: UnsafeBufferPointer<UInt8>) { self.buf = buf }

    /// Byte offset of the next byte to read.
    @inlinable
    public var offset: Int { i }

    /// Parses one complete JSON text: one value, white space around it allowed.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSONValue {
        var r = JSONReader(bytes)
        r.skipSpace()
        guard r.i < bytes.count else { throw JSONError("the line has no JSON value", at: 0) }
        let v = try r.value()
        try r.end()
        return v
    }

    /// The 1-based column of byte `offset` of `bytes`, in Unicode scalars (as diagnostics count
    /// columns): where to point at a `JSONError` or a `JSONValue`.
    public static func column(ofOffset offset: Int, in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var n = 1
        for k in 0..<min(offset, bytes.count) where bytes[k] & 0xC0 != 0x80 { n += 1 }
        return n
    }

    // MARK: Tokens

    @inlinable @inline(__always)
    mutating func skipSpace() {
        while i < buf.count {
            switch buf[i] {
            case 0x20, 0x0A, 0x0D, 0x09: i += 1
            default: return
            }
        }
    }

    /// The next byte after white space (not consumed).
    @inlinable @inline(__always)
    mutating func peek() throws(JSONError) -> UInt8 {
        skipSpace()
        guard i < buf.count else { throw JSONError("the line ends in the middle of a JSON value", at: i) }
        return buf[i]
    }

    /// Reads `c`, the next byte after white space.
    @inlinable
    public mutating func expect(_ c: UInt8) throws(JSONError) {
        guard try peek() == c else { throw JSONError("expected '\(Self.printable(c))', found \(describe(i))", at: i) }
        i += 1
    }

    /// Reads `c` if it is next after white space.
    @inlinable
    public mutating func consume(_ c: UInt8) throws(JSONError) -> Bool {
        if try peek() == c { i += 1; return true }
        return false
    }

    /// Checks that nothing but white space is left.
    @inlinable
    public mutating func end() throws(JSONError) {
        skipSpace()
        if i < buf.count {
            throw JSONError("unexpected \(describe(i)) after the JSON value (one value per line)", at: i)
        }
    }

    // MARK: Objects and arrays, member by member

    /// Iterates an object's members: `body` gets each key and must read its value. Repeated
    /// keys are passed on as they come.
    @inlinable @inline(__always)
    public mutating func object(_ body: (inout JSONReader, String) throws -> Void) throws {
        guard try open(.object) else { return }
        repeat {
            try keyStart()
            let keyOffset = i
            let key = try scanString()
            try colon(afterKeyAt: keyOffset)
            try body(&self, key)
        } while try next(.object)
    }

    /// Iterates an object's members by key index: `body` gets the position of the key in `keys`
    /// (nil for another key) and must read its value. Keys are compared as UTF-8 bytes, without
    /// building a `String` unless the key has escapes.
    @inlinable @inline(__always)
    public mutating func object(keys: JSONKeys, _ body: (inout JSONReader, Int?) throws -> Void) throws {
        guard try open(.object) else { return }
        var hint = 0
        repeat {
            try keyStart()
            let keyOffset = i
            let index = try keyIndex(in: keys, hint: hint)
            if let index { hint = index + 1 }
            try colon(afterKeyAt: keyOffset)
            try body(&self, index)
        } while try next(.object)
    }

    /// Iterates an array's elements: `body` must read each one.
    @inlinable @inline(__always)
    public mutating func array(_ body: (inout JSONReader) throws -> Void) throws {
        guard try open(.array) else { return }
        repeat {
            try itemStart()
            try body(&self)
        } while try next(.array)
    }

    /// An array of strings.
    @inlinable
    public mutating func stringArray() throws -> [String] {
        var out: [String] = []
        try array { r in out.append(try r.string()) }
        return out
    }

    /// An object whose values are strings; of a repeated key, the last value.
    @inlinable
    public mutating func stringMap() throws -> [String: String] {
        var out: [String: String] = [:]
        try object { r, k in out[k] = try r.string() }
        return out
    }

    @inlinable @inline(__always)
    mutating func enter() throws(JSONError) {
        depth += 1
        if depth > Self.maxDepth { throw JSONError("nested more than \(Self.maxDepth) levels deep", at: i) }
    }

    /// An object or an array: what their messages say.
    @usableFromInline
    enum Container {
        case object, array

        @inlinable var open: UInt8 { self == .object ? UInt8(ascii: "{") : UInt8(ascii: "[") }
        @inlinable var close: UInt8 { self == .object ? UInt8(ascii: "}") : UInt8(ascii: "]") }
        @usableFromInline var name: String { self == .object ? "an object" : "an array" }
        @usableFromInline var item: String { self == .object ? "a member" : "an array item" }
    }

    /// Reads `{` or `[`; `false` when the container is empty (its `}` or `]` read too).
    @inlinable @inline(__always)
    mutating func open(_ c: Container) throws(JSONError) -> Bool {
        guard try peek() == c.open else { throw expected(c.name) }
        try enter()
        i += 1
        skipSpace()
        if i < buf.count, buf[i] == c.close {
            i += 1
            depth -= 1
            return false
        }
        return true
    }

    /// After a member or an item: `true` when `,` and another one follow, `false` at the end.
    @inlinable @inline(__always)
    mutating func next(_ c: Container) throws(JSONError) -> Bool {
        skipSpace()
        guard i < buf.count else {
            throw JSONError("the line ends inside \(c.name) (missing '\(Self.printable(c.close))')", at: i)
        }
        if buf[i] == UInt8(ascii: ",") { i += 1; return true }
        if buf[i] == c.close { i += 1; depth -= 1; return false }
        throw JSONError("expected ',' or '\(Self.printable(c.close))' after \(c.item), found \(describe(i))", at: i)
    }

    /// Checks that a member's key in double quotes comes next.
    @inlinable @inline(__always)
    mutating func keyStart() throws(JSONError) {
        skipSpace()
        guard i < buf.count else { throw JSONError("the line ends inside an object (missing '}')", at: i) }
        guard buf[i] == UInt8(ascii: "\"") else {
            if buf[i] == UInt8(ascii: "}") { throw JSONError("trailing comma before '}'", at: i) }
            throw JSONError("expected a key in double quotes, found \(describe(i))", at: i)
        }
    }

    /// Reads the `:` after the key that starts at `keyOffset`.
    @inlinable @inline(__always)
    mutating func colon(afterKeyAt keyOffset: Int) throws(JSONError) {
        skipSpace()
        guard i < buf.count, buf[i] == UInt8(ascii: ":") else {
            var again = self
            again.i = keyOffset
            let key = (try? again.scanString()) ?? ""
            throw JSONError("expected ':' after the key '\(key)', found \(describe(i))", at: i)
        }
        i += 1
    }

    @inlinable @inline(__always)
    mutating func itemStart() throws(JSONError) {
        skipSpace()
        if i < buf.count, buf[i] == UInt8(ascii: "]") { throw JSONError("trailing comma before ']'", at: i) }
    }

    /// Reads a key (at its opening quote) and finds it in `keys`.
    @inlinable @inline(__always)
    mutating func keyIndex(in keys: JSONKeys, hint: Int) throws(JSONError) -> Int? {
        let open = i
        i += 1
        let start = i
        while i < buf.count, buf[i] != UInt8(ascii: "\""), buf[i] != UInt8(ascii: "\\"), buf[i] >= 0x20 { i += 1 }
        if i < buf.count, buf[i] == UInt8(ascii: "\"") {
            i += 1
            return keys.index(of: UnsafeBufferPointer(rebasing: buf[start..<i - 1]), hint: hint)
        }
        i = open
        var key = try scanString()   // escapes, or a mistake to report
        return key.withUTF8 { keys.index(of: $0, hint: hint) }
    }

    // MARK: Scalars

    /// `null` → true (read); otherwise false and nothing read.
    @inlinable
    public mutating func null() throws(JSONError) -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// A string.
    @inlinable
    public mutating func string() throws(JSONError) -> String {
        guard try peek() == UInt8(ascii: "\"") else { throw expected("a string") }
        return try scanString()
    }

    /// An integer: a number without fraction or exponent that fits in an `Int`.
    @inlinable
    public mutating func int() throws(JSONError) -> Int {
        guard try Self.startsNumber(peek()) else { throw expected("a whole number") }
        let start = i
        guard try scanNumber() else { throw JSONError("expected a whole number, found \(text(start..<i))", at: start) }
        let negative = buf[start] == UInt8(ascii: "-")
        // Accumulated below zero, so that Int.min reads too.
        var v = 0
        for k in (negative ? start + 1 : start)..<i {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.subtractingReportingOverflow(Int(buf[k] &- UInt8(ascii: "0")))
            if o1 || o2 { throw JSONError("\(text(start..<i)) does not fit in 64 bits", at: start) }
            v = s
        }
        if negative { return v }
        guard v != .min else { throw JSONError("\(text(start..<i)) does not fit in 64 bits", at: start) }
        return -v
    }

    /// A finite number.
    @inlinable
    public mutating func double() throws(JSONError) -> Double {
        guard try Self.startsNumber(peek()) else { throw expected("a number") }
        let start = i
        _ = try scanNumber()
        guard let v = Double(text(start..<i)), v.isFinite else {
            throw JSONError("\(text(start..<i)) is too large for a 64-bit floating-point number", at: start)
        }
        return v
    }

    // MARK: Whole values

    /// The next value as a tree, with the offset of every value. Repeated keys are an error.
    public mutating func value() throws(JSONError) -> JSONValue {
        let c = try peek()
        let start = i
        switch c {
        case UInt8(ascii: "{"):
            var members: [(key: String, value: JSONValue)] = []
            if try open(.object) {
                repeat {
                    try keyStart()
                    let keyOffset = i
                    let key = try scanString()
                    if members.contains(where: { $0.key == key }) {
                        throw JSONError("duplicate key '\(key)'", at: keyOffset)
                    }
                    try colon(afterKeyAt: keyOffset)
                    members.append((key, try value()))
                } while try next(.object)
            }
            return JSONValue(kind: .object(members), offset: start)
        case UInt8(ascii: "["):
            var items: [JSONValue] = []
            if try open(.array) {
                repeat {
                    try itemStart()
                    items.append(try value())
                } while try next(.array)
            }
            return JSONValue(kind: .array(items), offset: start)
        case UInt8(ascii: "\""): return JSONValue(kind: .string(try scanString()), offset: start)
        case UInt8(ascii: "t"): try literal("true"); return JSONValue(kind: .bool(true), offset: start)
        case UInt8(ascii: "f"): try literal("false"); return JSONValue(kind: .bool(false), offset: start)
        case UInt8(ascii: "n"): try literal("null"); return JSONValue(kind: .null, offset: start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try scanNumber()
            return JSONValue(kind: .number(text(start..<i)), offset: start)
        case UInt8(ascii: "'"):
            throw JSONError("strings need double quotes (\"…\"), not single quotes", at: i)
        default:
            throw JSONError("expected a JSON value, found \(describe(i))", at: i)
        }
    }

    // MARK: Scanning

    @inlinable
    mutating func literal(_ word: StaticString) throws(JSONError) {
        let n = word.utf8CodeUnitCount
        let p = word.utf8Start
        guard i + n <= buf.count else { throw JSONError("expected a JSON value, found \(describe(i))", at: i) }
        for k in 0..<n where buf[i + k] != p[k] {
            throw JSONError("expected a JSON value, found \(describe(i))", at: i)
        }
        i += n
    }

    @inlinable
    static func startsNumber(_ c: UInt8) -> Bool {
        c == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c)
    }

    /// Reads a number (at its first byte) by RFC 8259's grammar; `true` when it has neither a
    /// fraction nor an exponent.
    @inlinable
    mutating func scanNumber() throws(JSONError) -> Bool {
        if buf[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        let n = digits()
        guard n > 0 else { throw JSONError("a number needs digits after '-'", at: i) }
        if n > 1, buf[intStart] == UInt8(ascii: "0") {
            throw JSONError("numbers do not start with 0 (write \"…\" for ids with leading zeros)", at: intStart)
        }
        var integral = true
        if i < buf.count, buf[i] == UInt8(ascii: ".") {
            i += 1
            integral = false
            guard digits() > 0 else { throw JSONError("a number needs digits after '.'", at: i) }
        }
        if i < buf.count, buf[i] == UInt8(ascii: "e") || buf[i] == UInt8(ascii: "E") {
            i += 1
            integral = false
            if i < buf.count, buf[i] == UInt8(ascii: "+") || buf[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { throw JSONError("a number needs digits in its exponent", at: i) }
        }
        return integral
    }

    @inlinable @inline(__always)
    mutating func digits() -> Int {
        let s = i
        while i < buf.count, buf[i] >= UInt8(ascii: "0"), buf[i] <= UInt8(ascii: "9") { i += 1 }
        return i - s
    }

    /// A string starting at its opening quote; leaves the reader after the closing quote.
    @inlinable
    mutating func scanString() throws(JSONError) -> String {
        let open = i
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < buf.count {
            let b = buf[i]
            if b == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: buf[start..<i]), as: UTF8.self)
                i += 1
                return s
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { break }
            i += 1
        }
        return try scanEscapedString(open: open, start: start)
    }

    /// The rest of a string from its first escape (or mistake) on, `i` there.
    @usableFromInline
    mutating func scanEscapedString(open: Int, start: Int) throws(JSONError) -> String {
        guard i < buf.count else { throw JSONError("unterminated string (missing closing '\"')", at: open) }
        var out = [UInt8](UnsafeBufferPointer(rebasing: buf[start..<i]))
        while i < buf.count {
            let b = buf[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            if b < 0x20 { throw controlCharacter(b) }
            if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
            let escape = i
            i += 1
            guard i < buf.count else { break }
            let e = buf[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4(at: escape)
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate must be followed by \u and a low surrogate.
                    if i + 1 < buf.count, buf[i] == UInt8(ascii: "\\"), buf[i + 1] == UInt8(ascii: "u") {
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
                UTF8.encode(Unicode.Scalar(scalar) ?? "\u{FFFD}") { out.append($0) }
            default:
                throw JSONError("invalid escape '\\\(Self.printable(e))' in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)", at: escape)
            }
        }
        throw JSONError("unterminated string (missing closing '\"')", at: open)
    }

    /// The four hex digits after `\u` (the reader at the first digit).
    private mutating func hex4(at escape: Int) throws(JSONError) -> UInt32 {
        guard i + 4 <= buf.count else { throw JSONError("'\\u' needs four hex digits", at: escape) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = buf[i]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw JSONError("'\\u' needs four hex digits", at: escape)
            }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    // MARK: Messages

    @usableFromInline
    func controlCharacter(_ b: UInt8) -> JSONError {
        let hex = String(b, radix: 16, uppercase: true)
        let name = b == 0x09 ? "a tab" : b == 0x0A ? "a line break" : b == 0x0D ? "a carriage return"
            : "control character U+00\(hex.count == 1 ? "0" : "")\(hex)"
        return JSONError("\(name) inside a string must be escaped (\\t, \\n, \\r or \\uXXXX)", at: i)
    }

    /// "expected a string, found '4'", at the next byte.
    @usableFromInline
    func expected(_ what: String) -> JSONError {
        JSONError("expected \(what), found \(describe(i))", at: i)
    }

    @usableFromInline
    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: buf[range]), as: UTF8.self)
    }

    /// `'x'` for a printable ASCII byte, else a description.
    @usableFromInline
    func describe(_ at: Int) -> String {
        guard at < buf.count else { return "the end of the line" }
        let b = buf[at]
        return b >= 0x20 && b < 0x7F ? "'\(Self.printable(b))'"
            : b >= 0x80 ? "a non-ASCII character" : "control character 0x\(String(b, radix: 16))"
    }

    @usableFromInline
    static func printable(_ b: UInt8) -> String { String(UnicodeScalar(b)) }
}
