import Foundation

/// Reads JSON text from a byte buffer, value by value, for the shapes `JSONWriter` writes.
/// Anything unexpected throws `JSONReader.Unexpected`; callers then fall back to `JSONDecoder`.
package struct JSONReader {
    package struct Unexpected: Error {}

    private let buf: UnsafeBufferPointer<UInt8>
    private var i = 0

    package init(_ buf: UnsafeBufferPointer<UInt8>) { self.buf = buf }

    @inline(__always)
    private mutating func skipSpace() {
        while i < buf.count {
            let c = buf[i]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 } else { return }
        }
    }

    @inline(__always)
    private mutating func peek() throws(Unexpected) -> UInt8 {
        skipSpace()
        guard i < buf.count else { throw Unexpected() }
        return buf[i]
    }

    @inline(__always)
    package mutating func expect(_ c: UInt8) throws(Unexpected) {
        guard try peek() == c else { throw Unexpected() }
        i += 1
    }

    /// Consumes `c` if it is next.
    @inline(__always)
    package mutating func consume(_ c: UInt8) throws(Unexpected) -> Bool {
        if try peek() == c { i += 1; return true }
        return false
    }

    package mutating func end() throws(Unexpected) {
        skipSpace()
        guard i == buf.count else { throw Unexpected() }
    }

    /// Iterates an object's members: `body` gets each key and must read its value.
    package mutating func object(_ body: (inout JSONReader, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if try consume(UInt8(ascii: "}")) { return }
        repeat {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try body(&self, key)
        } while try consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    /// Iterates an object's members by key index: `body` gets the position of the key in `keys`
    /// (nil for another key) and must read its value. Keys with escapes are not expected here.
    package mutating func object(keys: [[UInt8]], _ body: (inout JSONReader, Int?) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if try consume(UInt8(ascii: "}")) { return }
        repeat {
            try expect(UInt8(ascii: "\""))
            let start = i
            while i < buf.count, buf[i] != UInt8(ascii: "\""), buf[i] != UInt8(ascii: "\\") { i += 1 }
            guard i < buf.count, buf[i] == UInt8(ascii: "\"") else { throw Unexpected() }
            let key = UnsafeBufferPointer(rebasing: buf[start..<i])
            i += 1
            var index: Int?
            for (n, k) in keys.enumerated() where k.count == key.count {
                if k.withUnsafeBufferPointer({ memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0 }) {
                    index = n
                    break
                }
            }
            try expect(UInt8(ascii: ":"))
            try body(&self, index)
        } while try consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    /// Iterates an array's elements: `body` must read each one.
    package mutating func array(_ body: (inout JSONReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if try consume(UInt8(ascii: "]")) { return }
        repeat { try body(&self) } while try consume(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
    }

    /// `null` → true (consumed); otherwise false and nothing consumed.
    package mutating func null() throws(Unexpected) -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        guard i + 4 <= buf.count, buf[i + 1] == UInt8(ascii: "u"), buf[i + 2] == UInt8(ascii: "l"),
              buf[i + 3] == UInt8(ascii: "l") else { throw Unexpected() }
        i += 4
        return true
    }

    package mutating func string() throws(Unexpected) -> String {
        try expect(UInt8(ascii: "\""))
        let start = i
        while i < buf.count {
            let c = buf[i]
            if c == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: buf[start..<i]), as: UTF8.self)
                i += 1
                return s
            }
            if c == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if c < 0x20 { throw Unexpected() }
            i += 1
        }
        throw Unexpected()
    }

    private mutating func escapedString(from start: Int) throws(Unexpected) -> String {
        var out = Array(UnsafeBufferPointer(rebasing: buf[start..<i]))
        while i < buf.count {
            let c = buf[i]
            i += 1
            if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            if c < 0x20 { throw Unexpected() }
            if c != UInt8(ascii: "\\") { out.append(c); continue }
            guard i < buf.count else { throw Unexpected() }
            let e = buf[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard i + 2 <= buf.count, buf[i] == UInt8(ascii: "\\"), buf[i + 1] == UInt8(ascii: "u") else {
                        throw Unexpected()
                    }
                    i += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw Unexpected() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw Unexpected() }
                out.append(contentsOf: UTF8.encode(u)!)
            default: throw Unexpected()
            }
        }
        throw Unexpected()
    }

    private mutating func hex4() throws(Unexpected) -> UInt32 {
        guard i + 4 <= buf.count else { throw Unexpected() }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = buf[i]
            i += 1
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: throw Unexpected()
            }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    package mutating func int() throws(Unexpected) -> Int {
        _ = try peek()
        var negative = false
        if buf[i] == UInt8(ascii: "-") { negative = true; i += 1 }
        let start = i
        var v = 0
        while i < buf.count, buf[i] >= UInt8(ascii: "0"), buf[i] <= UInt8(ascii: "9") {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int(buf[i] - UInt8(ascii: "0")))
            if o1 || o2 { throw Unexpected() }
            v = a
            i += 1
        }
        if i == start { throw Unexpected() }
        if i < buf.count, buf[i] == UInt8(ascii: ".") || buf[i] == UInt8(ascii: "e") || buf[i] == UInt8(ascii: "E") {
            throw Unexpected()   // not an integer: let the full decoder judge
        }
        return negative ? -v : v
    }

    package mutating func double() throws(Unexpected) -> Double {
        _ = try peek()
        let start = i
        while i < buf.count, Self.isNumberByte(buf[i]) { i += 1 }
        guard i > start,
              let v = Double(String(decoding: UnsafeBufferPointer(rebasing: buf[start..<i]), as: UTF8.self)),
              v.isFinite else { throw Unexpected() }
        return v
    }

    private static func isNumberByte(_ c: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
            || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
    }

    package mutating func stringArray() throws -> [String] {
        var out: [String] = []
        try array { r in out.append(try r.string()) }
        return out
    }

    package mutating func stringMap() throws -> [String: String] {
        var out: [String: String] = [:]
        try object { r, k in out[k] = try r.string() }
        return out
    }
}
