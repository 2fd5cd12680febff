/// The loader's own view of a document's text: its Unicode scalars and where each line starts,
/// split the way libyaml splits lines (`\n`, `\r\n`, a lone `\r`, NEL, LS and PS all end a line),
/// so that libyaml's marks, which count characters, index straight into it.
struct SourceMap: Sendable {
    /// Why the bytes cannot be handed to libyaml.
    enum Failure: Error, Equatable {
        /// A run of bytes that are not UTF-8 (up to `maxBytesShown` of them, then `more` bytes
        /// not shown), and where it starts.
        case invalidUTF8([UInt8], more: Int, Mark)
        /// A character libyaml refuses (a control character, U+FFFE, U+FFFF), and where it is.
        case invalidCharacter(Unicode.Scalar, Mark)
        /// The spots past `maxReported`: how many, and where the first of them is.
        case more(Int, Mark)
    }

    /// Every bad spot of a text, in order.
    struct Failures: Error, Equatable {
        var list: [Failure]
    }

    /// At most this many bad spots are reported, then one line for the rest: a file in another
    /// encoding has one on every line.
    static let maxReported = 20
    /// At most this many bytes of one run of invalid UTF-8 are shown.
    static let maxBytesShown = 8

    let scalars: [Unicode.Scalar]
    /// The index in `scalars` of the first character of each line; never empty.
    let lineStarts: [Int]

    /// Decodes and checks `bytes`, which hold no byte-order mark. On failure, every bad spot in
    /// file order (a run of invalid bytes is one spot), at most `maxReported` and a `more`.
    static func decode(_ bytes: [UInt8]) -> Result<SourceMap, Failures> {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(bytes.count)
        var lineStarts = [0]
        var failures: [Failure] = []
        var spots = 0
        var moreAt: Mark?
        // The run of invalid bytes being read: its bytes, where it started.
        var run: (bytes: [UInt8], count: Int, at: Mark)?
        var i = 0
        let n = bytes.count
        func here() -> Mark {
            Mark(line: lineStarts.count, column: scalars.count - lineStarts[lineStarts.count - 1] + 1)
        }
        func report(_ failure: Failure, at mark: Mark) {
            spots += 1
            if spots <= maxReported { failures.append(failure) } else if moreAt == nil { moreAt = mark }
        }
        func endRun() {
            guard let r = run else { return }
            run = nil
            report(.invalidUTF8(r.bytes, more: r.count - r.bytes.count, r.at), at: r.at)
        }
        while i < n {
            let b0 = bytes[i]
            var value: UInt32 = 0
            var length: Int
            switch b0 {
            case 0x00...0x7F: value = UInt32(b0); length = 1
            case 0xC2...0xDF: value = UInt32(b0 & 0x1F); length = 2
            case 0xE0...0xEF: value = UInt32(b0 & 0x0F); length = 3
            case 0xF0...0xF4: value = UInt32(b0 & 0x07); length = 4
            default: length = 0
            }
            // How many bytes form a valid (prefix of a) sequence: all `length` of them when valid.
            var valid = length == 0 ? 0 : 1
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
                    guard i + k < n else { break }
                    let b = bytes[i + k]
                    let ok = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xBF)
                    guard ok else { break }
                    value = value << 6 | UInt32(b & 0x3F)
                    valid += 1
                }
            }
            guard length > 0, valid == length else {
                // A maximal ill-formed subpart stands as one U+FFFD, as `String(decoding:)` shows
                // it, so the columns of what follows match the quoted line.
                let part = max(1, valid)
                if run == nil { run = ([], 0, here()) }
                run!.bytes += bytes[i..<i + part].prefix(maxBytesShown - run!.bytes.count)
                run!.count += part
                scalars.append("\u{FFFD}")
                i += part
                continue
            }
            endRun()
            // Only valid scalar values get here.
            let scalar = Unicode.Scalar(value)!
            if !isPrintable(value) { report(.invalidCharacter(scalar, here()), at: here()) }
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
        endRun()
        if let moreAt { failures.append(.more(spots - maxReported, moreAt)) }
        return failures.isEmpty ? .success(SourceMap(scalars: scalars, lineStarts: lineStarts)) : .failure(Failures(list: failures))
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
