/// The loader's own view of a document's text: its Unicode scalars and where each line starts,
/// split the way libyaml splits lines (`\n`, `\r\n`, a lone `\r`, NEL, LS and PS all end a line),
/// so that libyaml's marks, which count characters, index straight into it.
struct SourceMap: Sendable {
    /// Why the bytes cannot be handed to libyaml.
    enum Failure: Error, Equatable {
        /// The first byte of an ill-formed UTF-8 sequence, and where it is.
        case invalidUTF8(UInt8, Mark)
        /// A character libyaml refuses (a control character, U+FFFE, U+FFFF), and where it is.
        case invalidCharacter(Unicode.Scalar, Mark)
    }

    let scalars: [Unicode.Scalar]
    /// The index in `scalars` of the first character of each line; never empty.
    let lineStarts: [Int]

    /// Decodes and checks `bytes`, which hold no byte-order mark.
    static func decode(_ bytes: [UInt8]) -> Result<SourceMap, Failure> {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(bytes.count)
        var lineStarts = [0]
        var i = 0
        let n = bytes.count
        func here() -> Mark {
            Mark(line: lineStarts.count, column: scalars.count - lineStarts[lineStarts.count - 1] + 1)
        }
        while i < n {
            let b0 = bytes[i]
            var value: UInt32
            var length: Int
            switch b0 {
            case 0x00...0x7F: value = UInt32(b0); length = 1
            case 0xC2...0xDF: value = UInt32(b0 & 0x1F); length = 2
            case 0xE0...0xEF: value = UInt32(b0 & 0x0F); length = 3
            case 0xF0...0xF4: value = UInt32(b0 & 0x07); length = 4
            default: return .failure(.invalidUTF8(b0, here()))
            }
            if length > 1 {
                // The second byte's range depends on the first (Unicode, table 3-7): this rejects
                // overlong forms, surrogates and values above U+10FFFF.
                let low: UInt8, high: UInt8
                switch b0 {
                case 0xE0: (low, high) = (0xA0, 0xBF)
                case 0xED: (low, high) = (0x80, 0x9F)
                case 0xF0: (low, high) = (0x90, 0xBF)
                case 0xF4: (low, high) = (0x80, 0x8F)
                default: (low, high) = (0x80, 0xBF)
                }
                for k in 1..<length {
                    guard i + k < n else { return .failure(.invalidUTF8(b0, here())) }
                    let b = bytes[i + k]
                    let ok = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xBF)
                    guard ok else { return .failure(.invalidUTF8(b0, here())) }
                    value = value << 6 | UInt32(b & 0x3F)
                }
            }
            // Only valid scalar values get here.
            let scalar = Unicode.Scalar(value)!
            guard isPrintable(value) else {
                return .failure(.invalidCharacter(scalar, here()))
            }
            i += length
            scalars.append(scalar)
            switch value {
            case 0x0A, 0x85, 0x2028, 0x2029:
                lineStarts.append(scalars.count)
            case 0x0D:
                if i >= n || bytes[i] != 0x0A { lineStarts.append(scalars.count) }
            default:
                break
            }
        }
        return .success(SourceMap(scalars: scalars, lineStarts: lineStarts))
    }

    /// libyaml's rule (reader.c): tab, line breaks, printable ASCII, NEL and the rest of the BMP
    /// and beyond, except surrogates, U+FFFE and U+FFFF.
    static func isPrintable(_ v: UInt32) -> Bool {
        v == 0x09 || v == 0x0A || v == 0x0D || (0x20...0x7E).contains(v) || v == 0x85
            || (0xA0...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v)
            || (0x10000...0x10FFFF).contains(v)
    }

    static func isBreak(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x0A, 0x0D, 0x85, 0x2028, 0x2029: return true
        default: return false
        }
    }

    static func isBlank(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\t" }

    var lineCount: Int { lineStarts.count }

    /// The characters of 1-based `line`, without its line break.
    func lineRange(_ line: Int) -> Range<Int> {
        let start = lineStarts[line - 1]
        var end = line < lineStarts.count ? lineStarts[line] : scalars.count
        while end > start, Self.isBreak(scalars[end - 1]) { end -= 1 }
        return start..<end
    }

    /// The index of the character at `mark`, or `nil` when the mark is outside the text.
    func index(of mark: Mark) -> Int? {
        guard mark.line >= 1, mark.line <= lineStarts.count, mark.column >= 1 else { return nil }
        let i = lineStarts[mark.line - 1] + mark.column - 1
        let limit = mark.line < lineStarts.count ? lineStarts[mark.line] : scalars.count
        return i <= limit ? i : nil
    }

    /// The mark of the character at `index` (`scalars.count` is the end of the text).
    func mark(at index: Int) -> Mark {
        let i = max(0, min(index, scalars.count))
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= i { lo = mid } else { hi = mid - 1 }
        }
        return Mark(line: lo + 1, column: i - lineStarts[lo] + 1)
    }

    /// The index of the character that starts at byte `offset` of the UTF-8 text this map was
    /// decoded from (libyaml's reader reports byte offsets).
    static func scalarIndex(atByteOffset offset: Int, in bytes: [UInt8]) -> Int {
        var count = 0
        for b in bytes.prefix(max(0, offset)) where b & 0xC0 != 0x80 { count += 1 }
        return count
    }

    /// Whether every line is blank or a comment: libyaml would find no document.
    var isBlankOrComments: Bool {
        for line in 1...lineCount {
            let range = lineRange(line)
            var i = range.lowerBound
            while i < range.upperBound, Self.isBlank(scalars[i]) { i += 1 }
            if i < range.upperBound, scalars[i] != "#" { return false }
        }
        return true
    }
}
