/// Parses PCRE2 syntax into `PatternNode`s, for patterns PCRE2 has compiled already. It knows the
/// syntax well enough to find literals, groups and quantifiers; for anything it does not know it
/// throws, and the caller then assumes nothing about the pattern.
struct PatternParser {
    struct Unsupported: Error {}

    /// Inline options in force: `(?i)`, `(?x)`.
    private struct Options {
        var caseless = false
        var extended = false
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0
    /// True once `(*ACCEPT)` was seen: a match may then end anywhere.
    private(set) var sawAccept = false

    init(_ source: String) {
        scalars = Array(source.unicodeScalars)
    }

    mutating func parse() throws(Unsupported) -> PatternNode {
        var options = Options()
        let tree = try parseAlternation(&options)
        guard index == scalars.count else { throw Unsupported() }
        return tree
    }

    // MARK: Structure

    private var peek: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private mutating func next() throws(Unsupported) -> Unicode.Scalar {
        guard let scalar = peek else { throw Unsupported() }
        index += 1
        return scalar
    }

    private mutating func consume(_ expected: Unicode.Scalar) -> Bool {
        guard peek == expected else { return false }
        index += 1
        return true
    }

    private mutating func expect(_ expected: Unicode.Scalar) throws(Unsupported) {
        guard consume(expected) else { throw Unsupported() }
    }

    /// Skips to just after the next `terminator`.
    private mutating func skip(past terminator: Unicode.Scalar) throws(Unsupported) {
        while try next() != terminator {}
    }

    /// Branches separated by `|`, up to an unmatched `)` or the end. Options set inside apply to
    /// the rest of the enclosing group, later branches included.
    private mutating func parseAlternation(_ options: inout Options) throws(Unsupported) -> PatternNode {
        var branches: [PatternNode] = []
        var items: [PatternNode] = []
        while let scalar = peek, scalar != ")" {
            if scalar == "|" {
                index += 1
                branches.append(.sequence(items))
                items = []
                continue
            }
            if skipExtendedSpace(options) { continue }
            var atoms = try parseAtom(&options)
            guard let last = atoms.last else { continue }
            while skipExtendedSpace(options) {}
            if let (min, max, possessive) = try parseQuantifier() {
                atoms[atoms.count - 1] = .repetition(last, min: min, max: max, possessive: possessive)
            }
            items.append(contentsOf: atoms)
        }
        branches.append(.sequence(items))
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    /// In `(?x)` mode, skips white space or a `#` comment; true if it skipped something.
    private mutating func skipExtendedSpace(_ options: Options) -> Bool {
        guard options.extended, let scalar = peek else { return false }
        if scalar.properties.isPatternWhitespace {
            index += 1
            return true
        }
        if scalar == "#" {
            while let comment = peek, comment != "\n" { index += 1 }
            return true
        }
        return false
    }

    /// `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe followed by `?` (lazy) or `+` (possessive).
    private mutating func parseQuantifier() throws(Unsupported) -> (Int, Int?, Bool)? {
        var min = 0
        var max: Int?
        switch peek {
        case "*": index += 1
        case "+": index += 1; min = 1
        case "?": index += 1; max = 1
        case "{":
            guard let (low, high, length) = braces() else { return nil }
            index += length
            (min, max) = (low, high)
        default:
            return nil
        }
        if consume("+") { return (min, max, true) }
        _ = consume("?")
        return (min, max, false)
    }

    /// Reads `{n}`, `{n,}` or `{n,m}` at the current position without consuming it; nil when the
    /// brace is a literal.
    private func braces() -> (Int, Int?, Int)? {
        var offset = 1
        func number() -> Int? {
            var value: Int?
            while let scalar = peek(offset), scalar.isASCII, let digit = Int(String(scalar)) {
                value = Swift.min((value ?? 0) * 10 + digit, 1_000_000)
                offset += 1
            }
            return value
        }
        guard let low = number() else { return nil }
        var high: Int? = low
        if peek(offset) == "," {
            offset += 1
            high = number()
        }
        guard peek(offset) == "}" else { return nil }
        return (low, high, offset + 1)
    }

    // MARK: Atoms

    /// One atom, as a list because `\Q…\E` yields several characters (a quantifier then applies to
    /// the last); empty for comments and option settings.
    private mutating func parseAtom(_ options: inout Options) throws(Unsupported) -> [PatternNode] {
        let scalar = try next()
        switch scalar {
        case "(":
            return try parseGroup(&options).map { [$0] } ?? []
        case "[":
            return [.char(try parseClass(options), literal: nil)]
        case "\\":
            return try parseEscape(options)
        case ".":
            return [.char(.any, literal: nil)]
        case "^", "$":
            return [.zeroWidth(nil)]
        case "*", "+", "?", ")", "|":
            throw Unsupported()  // PCRE2 rejects a quantifier with nothing to repeat
        default:
            return [literal(scalar, options)]
        }
    }

    private func literal(_ scalar: Unicode.Scalar, _ options: Options) -> PatternNode {
        .char(CharSet(scalar, caseless: options.caseless),
              literal: !options.caseless || Self.isCaselessSafe(scalar) ? scalar : nil)
    }

    /// True if, under `(?i)`, the scalar only matches characters that compare equal to it
    /// ASCII-case-insensitively. In UTF mode k and s also match U+212A and U+017F.
    private static func isCaselessSafe(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let lower = scalar.value | 0x20
            return lower != 0x6B && lower != 0x73
        }
        return !scalar.properties.isCased && !scalar.properties.changesWhenCaseMapped
    }

    /// After `(`: a group, a lookaround, an option setting, a comment, a verb, a reference.
    private mutating func parseGroup(_ options: inout Options) throws(Unsupported) -> PatternNode? {
        if consume("*") { return try parseVerb(options) }
        guard consume("?") else { return try groupBody(options) { .group($0, atomic: false) } }
        let kind = try next()
        switch kind {
        case "#":
            try skip(past: ")")
            return nil
        case ":", "|":
            return try groupBody(options) { .group($0, atomic: false) }
        case ">":
            return try groupBody(options) { .group($0, atomic: true) }
        case "=":
            return try groupBody(options) { .lookaround($0) }
        case "!":
            return try groupBody(options) { .zeroWidth($0) }
        case "<" where consume("="):
            return try groupBody(options) { .lookaround($0) }
        case "<" where consume("!"):
            return try groupBody(options) { .zeroWidth($0) }
        case "<":
            try skip(past: ">")
            return try groupBody(options) { .group($0, atomic: false) }
        case "'":
            try skip(past: "'")
            return try groupBody(options) { .group($0, atomic: false) }
        case "P" where consume("<"):
            try skip(past: ">")
            return try groupBody(options) { .group($0, atomic: false) }
        case "P", "&", "R", "0"..."9", "+":
            try skip(past: ")")  // a backreference or a subroutine call
            return .unknown(nil)
        case "-" where peek.map({ ("0"..."9").contains($0) }) ?? false:
            try skip(past: ")")  // a relative subroutine call: (?-1)
            return .unknown(nil)
        case "C":
            try skip(past: ")")  // a callout: no effect without a callout function
            return nil
        case "(":
            // A conditional group. An assertion condition is a group of its own.
            if peek == "?" && (peek(1) == "=" || peek(1) == "!" || peek(1) == "<") {
                var conditionOptions = options
                _ = try parseGroup(&conditionOptions)
            } else {
                try skip(past: ")")
            }
            return try groupBody(options) { .unknown($0) }
        default:
            index -= 1
            return try parseOptionSetting(&options)
        }
    }

    /// The content of a group up to its `)`; options set inside stay inside.
    private mutating func groupBody(
        _ options: Options, _ make: (PatternNode) -> PatternNode
    ) throws(Unsupported) -> PatternNode {
        var inner = options
        let body = try parseAlternation(&inner)
        try expect(")")
        return make(body)
    }

    /// `(?i)`, `(?-x)`, `(?^i)`, or `(?i:…)`.
    private mutating func parseOptionSetting(_ options: inout Options) throws(Unsupported) -> PatternNode? {
        var updated = options
        var on = true
        while true {
            let letter = try next()
            switch letter {
            case "-": on = false
            case "^": updated = Options()
            case "i": updated.caseless = on
            case "x": updated.extended = on
            case "m", "n", "s", "J", "U": break
            case ")":
                options = updated
                return nil
            case ":":
                return try groupBody(updated) { .group($0, atomic: false) }
            default:
                throw Unsupported()
            }
        }
    }

    /// After `(*`: a verb such as `(*FAIL)` or `(*MARK:x)`, a start-of-pattern option such as
    /// `(*UTF)`, or an alphabetic assertion such as `(*pla:…)`.
    private mutating func parseVerb(_ options: Options) throws(Unsupported) -> PatternNode? {
        var name = ""
        while let scalar = peek, scalar.properties.isAlphabetic || scalar == "_" {
            name.unicodeScalars.append(scalar)
            index += 1
        }
        if name == "ACCEPT" { sawAccept = true }
        if consume(":") {
            switch name {
            case "pla", "positive_lookahead", "plb", "positive_lookbehind",
                 "napla", "non_atomic_positive_lookahead", "naplb", "non_atomic_positive_lookbehind":
                return try groupBody(options) { .lookaround($0) }
            case "nla", "negative_lookahead", "nlb", "negative_lookbehind":
                return try groupBody(options) { .zeroWidth($0) }
            case "atomic", "asr", "atomic_script_run":
                return try groupBody(options) { .group($0, atomic: true) }
            case "sr", "script_run":
                return try groupBody(options) { .group($0, atomic: false) }
            default:
                break  // a verb with an argument: (*MARK:name)
            }
        }
        try skip(past: ")")
        return name.isEmpty ? nil : .zeroWidth(nil)
    }

    // MARK: Escapes and classes

    /// After `\` outside a class.
    private mutating func parseEscape(_ options: Options) throws(Unsupported) -> [PatternNode] {
        let scalar = try next()
        if let set = try characterTypeEscape(scalar) { return [.char(set, literal: nil)] }
        switch scalar {
        case "b", "B", "A", "Z", "z", "G", "K":
            return [.zeroWidth(nil)]
        case "Q":
            var atoms: [PatternNode] = []
            while let quoted = peek {
                if quoted == "\\" && peek(1) == "E" {
                    index += 2
                    break
                }
                index += 1
                atoms.append(literal(quoted, options))
            }
            return atoms
        case "E":
            return []
        case "1"..."9", "g", "k":
            try skipReference(after: scalar)
            return [.unknown(nil)]
        case "X", "R":
            return [.unknown(nil)]  // a grapheme cluster or a line break: one or more characters
        default:
            return [literal(try escapedCharacter(scalar), options)]
        }
    }

    /// `\d`, `\w`, `\s`, `\h`, `\v`, `\N`, `\p{…}` and their negations; nil for other escapes.
    private mutating func characterTypeEscape(_ scalar: Unicode.Scalar) throws(Unsupported) -> CharSet? {
        switch scalar {
        case "d": return .digits
        case "w": return .wordChars
        case "s", "h", "v": return .spaces
        case "D", "W", "S", "H", "V": return .any
        case "N" where !(peek == "{" && peek(1) == "U"): return .any
        case "p", "P":
            var name = ""
            if consume("{") {
                while let letter = peek, letter != "}" {
                    name.unicodeScalars.append(letter)
                    index += 1
                }
                try expect("}")
            } else {
                name = String(Character(try next()))
            }
            // Letters (L, Lu, Latin…) and numbers (N, Nd…): word characters. Anything else may
            // be anything.
            if scalar == "p" && (name.hasPrefix("L") || name.hasPrefix("N")) {
                var set = CharSet.wordChars
                set.isExact = false
                return set
            }
            return .any
        default:
            return nil
        }
    }

    /// Skips the rest of `\1`, `\g{name}`, `\g-1`, `\k<name>` and the like.
    private mutating func skipReference(after scalar: Unicode.Scalar) throws(Unsupported) {
        if scalar != "g" && scalar != "k" {
            while let digit = peek, ("0"..."9").contains(digit) { index += 1 }
            return
        }
        switch try next() {
        case "{": try skip(past: "}")
        case "<": try skip(past: ">")
        case "'": try skip(past: "'")
        case "-", "+", "0"..."9":
            while let digit = peek, ("0"..."9").contains(digit) { index += 1 }
        default: throw Unsupported()
        }
    }

    /// The character an escape such as `\.`, `\n`, `\x{263A}` or `\cA` stands for.
    private mutating func escapedCharacter(_ scalar: Unicode.Scalar) throws(Unsupported) -> Unicode.Scalar {
        switch scalar {
        case "n": return "\n"
        case "t": return "\t"
        case "r": return "\r"
        case "f": return "\u{0C}"
        case "e": return "\u{1B}"
        case "a": return "\u{07}"
        case "c":
            let control = try next()
            guard control.isASCII, let result = Unicode.Scalar(control.value & 0x5F ^ 0x40) else { throw Unsupported() }
            return result
        case "x":
            if consume("{") { return try number(radix: 16, until: "}") }
            var value: UInt32 = 0
            for _ in 0..<2 {
                guard let digit = peek.flatMap({ UInt32(String($0), radix: 16) }) else { break }
                value = value * 16 + digit
                index += 1
            }
            return try scalarValue(value)
        case "o":
            try expect("{")
            return try number(radix: 8, until: "}")
        case "0":
            var value: UInt32 = 0
            for _ in 0..<2 {
                guard let digit = peek.flatMap({ UInt32(String($0), radix: 8) }) else { break }
                value = value * 8 + digit
                index += 1
            }
            return try scalarValue(value)
        case "N":
            try expect("{")
            try expect("U")
            try expect("+")
            return try number(radix: 16, until: "}")
        default:
            // Any other letter or digit is an escape PCRE2 gives a meaning to (or rejects).
            if scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)) {
                throw Unsupported()
            }
            return scalar
        }
    }

    private mutating func number(radix: UInt32, until terminator: Unicode.Scalar) throws(Unsupported) -> Unicode.Scalar {
        var value: UInt32 = 0
        while let scalar = peek, scalar != terminator {
            guard let digit = UInt32(String(scalar), radix: Int(radix)) else { throw Unsupported() }
            value = Swift.min(value * radix + digit, 0x110000)
            index += 1
        }
        try expect(terminator)
        return try scalarValue(value)
    }

    private func scalarValue(_ value: UInt32) throws(Unsupported) -> Unicode.Scalar {
        guard let scalar = Unicode.Scalar(value) else { throw Unsupported() }
        return scalar
    }

    /// After `[`: the set of characters the class matches, over-approximated.
    private mutating func parseClass(_ options: Options) throws(Unsupported) -> CharSet {
        let negated = consume("^")
        var set = CharSet()
        var first = true
        var previous: Unicode.Scalar?  // the last single character, for ranges
        while true {
            let scalar = try next()
            if scalar == "]" && !first { break }
            first = false
            if scalar == "[" && peek == ":" {
                set = set.union(try posixClass())
                previous = nil
                continue
            }
            var member: Unicode.Scalar
            if scalar == "\\" {
                let escaped = try next()
                if let typeSet = try characterTypeEscape(escaped) {
                    set = set.union(typeSet)
                    previous = nil
                    continue
                }
                switch escaped {
                case "Q":
                    while let quoted = peek, !(quoted == "\\" && peek(1) == "E") {
                        index += 1
                        set.insert(quoted, caseless: options.caseless)
                    }
                    index = Swift.min(index + 2, scalars.count)
                    previous = nil
                    continue
                case "E":
                    continue
                case "b":
                    member = "\u{08}"
                default:
                    member = try escapedCharacter(escaped)
                }
            } else {
                member = scalar
            }
            if scalar != "\\" && member == "-", let low = previous, peek != "]" {
                // A range: from the previous member to the next one.
                var high = try next()
                if high == "\\" { high = try escapedCharacter(try next()) }
                guard low.value <= high.value else { throw Unsupported() }
                if high.value < 0x80 {
                    for value in low.value...high.value { set.insert(Unicode.Scalar(value)!, caseless: options.caseless) }
                } else {
                    for value in low.value..<Swift.max(low.value, Swift.min(high.value + 1, 0x80)) {
                        set.insert(Unicode.Scalar(value)!, caseless: options.caseless)
                    }
                    set = set.union(CharSet(low: 0, high: 0, other: 7, isExact: true))
                    if options.caseless { set = set.union(.letters) }
                }
                previous = nil
                continue
            }
            set.insert(member, caseless: options.caseless)
            previous = member
        }
        return negated ? set.negated : set
    }

    /// After `[` with `:` next: `[:alpha:]`, `[:^digit:]`.
    private mutating func posixClass() throws(Unsupported) -> CharSet {
        index += 1
        let negated = consume("^")
        var name = ""
        while let letter = peek, letter != ":" {
            name.unicodeScalars.append(letter)
            index += 1
        }
        try expect(":")
        try expect("]")
        if negated { return .any }
        switch name {
        case "digit": return .digits
        case "alpha": return .letters
        case "alnum": return .letters.union(.digits)
        case "word": return .wordChars
        case "space": return .spaces
        default:
            // upper, lower, blank, punct…: over-approximated, so not to be negated.
            return CharSet(low: ~0, high: ~0, other: 7, isExact: false)
        }
    }
}
