/// Maps each character of a scalar's value back to where it was written, by replaying libyaml's
/// scanning rules (quotes, `''`, backslash escapes, line folding, block indentation) over the
/// source. The replay is checked against the value libyaml produced; when they differ the caller
/// falls back to the start of the scalar, so a gap in the replay can cost precision, never
/// correctness.
enum ScalarPositions {
    /// The source index of each value character, then one more: the index just past the value.
    /// `nil` when the source does not reproduce `value`.
    static func positions(of value: String, style: ScalarStyle, start: Int, end: Int,
                          in s: [Unicode.Scalar]) -> [Int]? {
        var i = start
        // Skip the node's properties: `!tag` and `&anchor`, in either order.
        while i < s.count, s[i] == "!" || s[i] == "&" {
            while i < s.count, !isBlankOrBreak(s[i]) { i += 1 }
            while i < s.count, isBlankOrBreak(s[i]) { i += 1 }
        }
        let expected = Array(value.unicodeScalars)
        switch style {
        case .plain, .singleQuoted, .doubleQuoted:
            guard let (out, positions) = flow(style: style, from: i, end: end, in: s), out == expected else {
                return nil
            }
            return positions
        case .literal, .folded:
            return block(folded: style == .folded, from: i, end: end, value: expected, in: s)
        }
    }

    private static func isBlankOrBreak(_ c: Unicode.Scalar) -> Bool {
        SourceMap.isBlank(c) || SourceMap.isBreak(c)
    }

    /// A line break at `i` as libyaml reads it: CR LF, CR, LF and NEL become LF; LS and PS stay.
    private static func lineBreak(at i: Int, in s: [Unicode.Scalar]) -> (Unicode.Scalar, Int) {
        switch s[i] {
        case "\r": return ("\n", i + 1 < s.count && s[i + 1] == "\n" ? 2 : 1)
        case "\u{85}": return ("\n", 1)
        default: return (s[i], 1)
        }
    }

    /// Plain and quoted scalars (libyaml's `yaml_parser_scan_flow_scalar` and
    /// `yaml_parser_scan_plain_scalar`): the value, and positions ending with the end index.
    private static func flow(style: ScalarStyle, from start: Int, end: Int,
                             in s: [Unicode.Scalar]) -> ([Unicode.Scalar], [Int])? {
        let quote: Unicode.Scalar? = style == .singleQuoted ? "'" : style == .doubleQuoted ? "\"" : nil
        var i = start
        if let quote {
            guard i < s.count, s[i] == quote else { return nil }
            i += 1
        }
        // A plain scalar ends at its end mark; a quoted one at its closing quote.
        let limit = quote == nil ? min(end, s.count) : s.count
        var out: [Unicode.Scalar] = []
        var positions: [Int] = []
        var whitespaces: [(Unicode.Scalar, Int)] = []
        var leadingBreak: (Unicode.Scalar, Int)?
        var trailingBreaks: [(Unicode.Scalar, Int)] = []
        var leadingBlanks = false

        func emit(_ c: Unicode.Scalar, _ p: Int) {
            out.append(c)
            positions.append(p)
        }
        // Blanks between words stay; one line break becomes a space; n breaks become n - 1.
        func join() {
            if leadingBlanks {
                if let lb = leadingBreak, lb.0 == "\n" {
                    if trailingBreaks.isEmpty { emit(" ", lb.1) } else { trailingBreaks.forEach { emit($0.0, $0.1) } }
                } else {
                    if let lb = leadingBreak { emit(lb.0, lb.1) }
                    trailingBreaks.forEach { emit($0.0, $0.1) }
                }
            } else {
                whitespaces.forEach { emit($0.0, $0.1) }
            }
            whitespaces = []
            leadingBreak = nil
            trailingBreaks = []
            leadingBlanks = false
        }

        var endIndex = limit
        while true {
            if quote == nil {
                while i < limit, !isBlankOrBreak(s[i]) {
                    if leadingBlanks || !whitespaces.isEmpty { join() }
                    emit(s[i], i)
                    i += 1
                }
                if i >= limit { break }
            } else {
                leadingBlanks = false
                var closed = false
                while i < s.count, !isBlankOrBreak(s[i]) {
                    let c = s[i]
                    if quote == "'", c == "'", i + 1 < s.count, s[i + 1] == "'" {
                        emit("'", i)
                        i += 2
                    } else if c == quote {
                        closed = true
                        break
                    } else if quote == "\"", c == "\\" {
                        guard i + 1 < s.count else { return nil }
                        if SourceMap.isBreak(s[i + 1]) {
                            // An escaped line break joins the lines without a space.
                            i += 1 + lineBreak(at: i + 1, in: s).1
                            leadingBlanks = true
                            break
                        }
                        guard let (decoded, length) = escape(at: i, in: s) else { return nil }
                        emit(decoded, i)
                        i += length
                    } else {
                        emit(c, i)
                        i += 1
                    }
                }
                if closed {
                    endIndex = i
                    break
                }
                if i >= s.count { return nil }
            }
            while i < limit, isBlankOrBreak(s[i]) {
                if SourceMap.isBlank(s[i]) {
                    if !leadingBlanks { whitespaces.append((s[i], i)) }
                    i += 1
                } else {
                    let (b, length) = lineBreak(at: i, in: s)
                    if !leadingBlanks {
                        whitespaces = []
                        leadingBreak = (b, i)
                        leadingBlanks = true
                    } else {
                        trailingBreaks.append((b, i))
                    }
                    i += length
                }
            }
            if quote != nil { join() }
        }
        positions.append(endIndex)
        return (out, positions)
    }

    /// libyaml's one-letter escapes.
    private static let simpleEscapes: [Unicode.Scalar: UInt32] = [
        "0": 0, "a": 7, "b": 8, "t": 9, "\t": 9, "n": 10, "v": 11, "f": 12, "r": 13, "e": 0x1B,
        " ": 0x20, "\"": 0x22, "/": 0x2F, "'": 0x27, "\\": 0x5C, "N": 0x85, "_": 0xA0,
        "L": 0x2028, "P": 0x2029,
    ]

    /// A double-quoted escape at `i` (the backslash): the character and the escape's length.
    private static func escape(at i: Int, in s: [Unicode.Scalar]) -> (Unicode.Scalar, Int)? {
        let e = s[i + 1]
        if let v = simpleEscapes[e] { return Unicode.Scalar(v).map { ($0, 2) } }
        let digits: Int
        switch e {
        case "x": digits = 2
        case "u": digits = 4
        case "U": digits = 8
        default: return nil
        }
        guard i + 2 + digits <= s.count else { return nil }
        var value: UInt32 = 0
        for k in 0..<digits {
            guard let d = hexValue(s[i + 2 + k]) else { return nil }
            value = value << 4 | d
        }
        return Unicode.Scalar(value).map { ($0, 2 + digits) }
    }

    private static func hexValue(_ c: Unicode.Scalar) -> UInt32? {
        switch c.value {
        case 0x30...0x39: return c.value - 0x30
        case 0x41...0x46: return c.value - 0x41 + 10
        case 0x61...0x66: return c.value - 0x61 + 10
        default: return nil
        }
    }

    /// Literal and folded blocks: the content lines, their indentation removed, aligned with the
    /// value; a folded line break may become a space or vanish.
    private static func block(folded: Bool, from start: Int, end: Int, value: [Unicode.Scalar],
                              in s: [Unicode.Scalar]) -> [Int]? {
        guard start < s.count, s[start] == "|" || s[start] == ">" else { return nil }
        var i = start
        while i < s.count, !SourceMap.isBreak(s[i]) { i += 1 }
        if i < s.count { i += lineBreak(at: i, in: s).1 }
        let contentStart = i
        let limit = min(max(end, contentStart), s.count)

        // The indentation: the first content line's, or more if an empty line before it has more.
        var indent = 0
        var j = contentStart
        while j < limit {
            var spaces = 0
            while j < limit, s[j] == " " { spaces += 1; j += 1 }
            indent = max(indent, spaces)
            if j < limit, !SourceMap.isBreak(s[j]) { break }
            if j < limit { j += lineBreak(at: j, in: s).1 }
        }

        var stream: [(Unicode.Scalar, Int)] = []
        i = contentStart
        while i < limit {
            var skipped = 0
            while i < limit, skipped < indent, s[i] == " " { skipped += 1; i += 1 }
            while i < limit, !SourceMap.isBreak(s[i]) { stream.append((s[i], i)); i += 1 }
            if i < limit {
                let (b, length) = lineBreak(at: i, in: s)
                stream.append((b, i))
                i += length
            }
        }

        var positions: [Int] = []
        positions.reserveCapacity(value.count + 1)
        var k = 0
        for v in value {
            while true {
                guard k < stream.count else {
                    // A kept final line break may lie past the content.
                    guard v == "\n" else { return nil }
                    positions.append(limit)
                    break
                }
                let (c, p) = stream[k]
                if c == v || (folded && v == " " && c == "\n") {
                    positions.append(p)
                    k += 1
                    break
                }
                guard c == "\n" else { return nil }
                k += 1
            }
        }
        positions.append(positions.last.map { min($0 + 1, s.count) } ?? contentStart)
        return positions
    }
}
