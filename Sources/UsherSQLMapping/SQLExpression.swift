/// A SQL condition over one row's columns, written in a mapping file: who owns a conversation
/// (`status = 0 AND assignee_id IS NOT NULL`), which messages Usher reads (`private = false`).
///
/// Usher splices it into its statements, where other tables are in scope too (a message's row
/// beside its conversation's, both with a `status`), so the columns are qualified: each bare
/// name that is a column of the row becomes `alias."name"` (`sql(alias:columns:)`). A name
/// followed by `(` is a function, one after `.`, `::` or `AS` a type or a qualified name: those
/// stay as written. It is one condition: no `;`, no comment, no `$` (parameters, dollar quotes),
/// quotes closed and parentheses balanced — checked when the file loads; the database checks
/// the rest when the store opens.
public struct SQLExpression: Sendable, Hashable, CustomStringConvertible {
    /// As written in the file.
    public let text: String
    private let tokens: [Token]

    private struct Token: Sendable, Hashable {
        enum Kind: Sendable, Hashable { case word, quotedName, string, number, symbol, space }
        var kind: Kind
        var text: String
        /// Where it starts in `text`, in Unicode scalars.
        var offset: Int
    }

    public var description: String { text }

    /// A problem with the text, and where (in Unicode scalars from its start).
    public struct Problem: Error, Sendable, Hashable {
        public var offset: Int
        public var reason: String
    }

    /// The condition in `text`, or what is wrong with it.
    public init(_ text: String) throws(Problem) {
        self.text = text
        let s = Array(text.unicodeScalars)
        var tokens: [Token] = []
        var depth: [Int] = []   // offsets of the open parentheses
        var i = 0
        func isLetter(_ u: Unicode.Scalar) -> Bool { ("a"..."z").contains(u) || ("A"..."Z").contains(u) || u == "_" || u.value > 127 }
        func isDigit(_ u: Unicode.Scalar) -> Bool { ("0"..."9").contains(u) }
        func token(_ kind: Token.Kind, from start: Int) {
            tokens.append(Token(kind: kind, text: String(String.UnicodeScalarView(s[start..<i])), offset: start))
        }
        /// A quoted run from `i` (at its opening `quote`) to its close; a doubled quote is one.
        func quoted(_ quote: Unicode.Scalar, _ what: String) throws(Problem) {
            let start = i
            i += 1
            while true {
                guard i < s.count else { throw Problem(offset: start, reason: "\(what) opened here is not closed") }
                if s[i] == quote {
                    if i + 1 < s.count && s[i + 1] == quote { i += 2; continue }
                    i += 1
                    return
                }
                i += 1
            }
        }
        while i < s.count {
            let u = s[i], start = i
            if u == " " || u == "\t" || u == "\n" || u == "\r" {
                while i < s.count && [" ", "\t", "\n", "\r"].contains(s[i]) { i += 1 }
                token(.space, from: start)
            } else if u == "'" {
                try quoted("'", "the text")
                token(.string, from: start)
            } else if u == "\"" {
                try quoted("\"", "the quoted name")
                token(.quotedName, from: start)
            } else if isLetter(u) {
                while i < s.count && (isLetter(s[i]) || isDigit(s[i])) { i += 1 }
                token(.word, from: start)
            } else if isDigit(u) {
                while i < s.count && (isLetter(s[i]) || isDigit(s[i]) || s[i] == ".") { i += 1 }
                token(.number, from: start)
            } else if u == ";" {
                throw Problem(offset: i, reason: "';' ends a statement: write one condition")
            } else if u == "$" {
                throw Problem(offset: i, reason: "'$' is not allowed (no parameters or dollar quotes): write the value as a constant")
            } else if (u == "-" && i + 1 < s.count && s[i + 1] == "-") || (u == "/" && i + 1 < s.count && s[i + 1] == "*") {
                throw Problem(offset: i, reason: "no comments in a condition: write them as YAML comments, after '#'")
            } else {
                if u == "(" { depth.append(i) }
                if u == ")" {
                    guard depth.popLast() != nil else { throw Problem(offset: i, reason: "this ')' closes no '('") }
                }
                i += 1
                token(.symbol, from: start)
            }
        }
        if let open = depth.last { throw Problem(offset: open, reason: "this '(' is not closed") }
        guard tokens.contains(where: { $0.kind != .space }) else { throw Problem(offset: 0, reason: "the condition is empty") }
        self.tokens = tokens
    }

    /// The condition with each column of the row in `columns` (as the catalogue names them)
    /// qualified by `alias` (nil: left bare, as an index predicate reads), and where each
    /// character of the result came from in `text` (for the database's error positions).
    public func sql(alias: String?, columns: Set<String>) -> (sql: String, source: [Int]) {
        var out = ""
        var source: [Int] = []
        let solid = tokens.indices.filter { tokens[$0].kind != .space }
        func neighbour(_ i: Int, _ step: Int) -> Token? {
            guard let at = solid.firstIndex(of: i), solid.indices.contains(at + step) else { return nil }
            return tokens[solid[at + step]]
        }
        for (i, t) in tokens.enumerated() {
            var name: String?
            switch t.kind {
            case .word: name = t.text.lowercased()
            case .quotedName: name = String(t.text.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
            default: break
            }
            if let alias, let n = name, columns.contains(n) {
                let before = neighbour(i, -1), after = neighbour(i, 1)
                let typeOrQualified = before.map { $0.text == "." || $0.text == ":" || $0.text.lowercased() == "as" } ?? false
                let call = after.map { $0.text == "(" || $0.text == "." } ?? false
                if !typeOrQualified && !call {
                    let prefix = alias + "."
                    out += prefix
                    source += Array(repeating: t.offset, count: prefix.unicodeScalars.count)
                    let quoted = "\"" + n.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                    out += quoted
                    let length = t.text.unicodeScalars.count
                    source += (0..<quoted.unicodeScalars.count).map { t.offset + min($0, length - 1) }
                    continue
                }
            }
            out += t.text
            source += (0..<t.text.unicodeScalars.count).map { t.offset + $0 }
        }
        return (out, source)
    }
}
