/// A failure reported by libyaml, copied out of the parser before it is freed.
struct LibYAMLError {
    enum Kind { case reader, scanner, parser, memory, other }

    let kind: Kind
    /// libyaml's description of the problem ("mapping values are not allowed in this context").
    let problem: String
    /// Where the problem is; reader errors have only a byte offset.
    let problemMark: Mark
    /// What libyaml was doing ("while parsing a block mapping"), if it says.
    let context: String?
    /// Where that started.
    let contextMark: Mark?
    /// For reader errors: the byte offset of the problem.
    let problemOffset: Int
}

extension LibYAMLError {
    /// Whether libyaml tripped over a tab: its own wording, or the character at the problem.
    func isAboutTab(in map: SourceMap) -> Bool {
        if problem.contains("tab character") { return true }
        guard let i = map.index(of: problemMark), i < map.scalars.count else { return false }
        return map.scalars[i] == "\t"
    }

    /// libyaml's problem, its context ("while parsing a block mapping that started at line 3,
    /// column 3") and, where a common cause is plain, what to do about it.
    func message(in map: SourceMap) -> String {
        var text = problem
        if let context, let contextMark, !context.contains("for the next token") {
            text += " (\(context) that started at line \(contextMark.line), column \(contextMark.column))"
        }
        if let hint = hint(in: map) { text += "; " + hint }
        return text
    }

    /// A key indented further than the key of the line above, which has a value (`id: x`, then
    /// `   when:` one space too far): libyaml reads the key as more of that value and stops at its
    /// colon ("mapping values are not allowed"). Returns where the key starts and what to do.
    func misindentedKey(in map: SourceMap) -> (at: Mark, message: String)? {
        guard problem == "mapping values are not allowed in this context",
              let colon = map.index(of: problemMark), colon < map.scalars.count, map.scalars[colon] == ":"
        else { return nil }
        let s = map.scalars
        let line = map.lineRange(problemMark.line)
        // Only blanks, then one key, before the colon.
        var start = line.lowerBound
        while start < colon, SourceMap.isBlank(s[start]) { start += 1 }
        let key = s[start..<colon]
        guard !key.isEmpty, !key.contains(where: { $0 == ":" || $0 == "#" || $0 == "\"" || $0 == "'" }),
              key.first != "-" else { return nil }
        // The line above with content, and the column its key starts at (after any '- ').
        var above = problemMark.line - 1
        while above >= 1 {
            let r = map.lineRange(above)
            if let first = s[r].firstIndex(where: { !SourceMap.isBlank($0) }), s[first] != "#" { break }
            above -= 1
        }
        guard above >= 1 else { return nil }
        let r = map.lineRange(above)
        var k = r.lowerBound
        while k < r.upperBound, SourceMap.isBlank(s[k]) || (s[k] == "-" && (k + 1 == r.upperBound || SourceMap.isBlank(s[k + 1]))) { k += 1 }
        let keyColumn = map.mark(at: k).column, column = map.mark(at: start).column
        guard keyColumn < column else { return nil }
        var name = "", aboveName = ""
        name.unicodeScalars.append(contentsOf: key)
        aboveName.unicodeScalars.append(contentsOf: s[k..<r.upperBound].prefix { $0 != ":" && !SourceMap.isBlank($0) })
        let by = column - keyColumn
        return (map.mark(at: start),
                "wrong indentation: '\(name)' starts \(by) space\(by == 1 ? "" : "s") further in than '\(aboveName)' on line \(above), "
                    + "so YAML reads it as more of that line's value; start '\(name)' at column \(keyColumn), under '\(aboveName)'")
    }

    private func hint(in map: SourceMap) -> String? {
        let at: Unicode.Scalar? = map.index(of: problemMark).flatMap { $0 < map.scalars.count ? map.scalars[$0] : nil }
        // Whether something other than blanks precedes the problem on its line.
        var afterContent = false
        if let i = map.index(of: problemMark) {
            let line = map.lineRange(problemMark.line)
            afterContent = map.scalars[line.lowerBound..<min(i, line.upperBound)].contains { !SourceMap.isBlank($0) }
        }
        switch problem {
        case "mapping values are not allowed in this context":
            return "a value that contains ': ' must be quoted, and a key must start its own line"
        case "did not find expected key":
            return afterContent
                ? "unexpected text after a value; quote the whole value"
                : "check the indentation: the keys of one mapping must start in the same column"
        case "did not find expected '-' indicator":
            return "check the indentation: the items of one list must start in the same column"
        case "block sequence entries are not allowed in this context":
            return "start the list on the next line, indented, or write it as [a, b]"
        case "found unknown escape character":
            return "inside double quotes a backslash starts an escape; "
                + "use single quotes ('\\d+') or double the backslash"
        case "found unexpected end of stream" where context?.contains("quoted scalar") == true:
            return "the closing quote is missing"
        case "did not find expected ',' or ']'":
            return "a [list] needs commas between its items and a closing ']'"
        case "did not find expected ',' or '}'":
            return "a {mapping} needs commas between its entries and a closing '}'"
        case "did not find expected node content":
            return "a value is missing here, or it starts with a character that needs quotes"
        case "did not find expected <document start>":
            return "there is text after the end of the document; check its indentation and brackets"
        case "found undefined tag handle":
            return "a value that starts with '!' must be quoted"
        case "did not find expected alphabetic or numeric character"
            where context?.contains("anchor") == true || context?.contains("alias") == true:
            return "a value that starts with '&' or '*' must be quoted"
        case "could not find expected ':'":
            return "a key must be followed by ': ', and a quoted value must be closed on time"
        case "did not find expected comment or line break" where context?.contains("block scalar") == true:
            return "only '+', '-' or an indentation digit may follow '|' or '>' on its line"
        case "found character that cannot start any token":
            switch at {
            case "@", "`": return "a value that starts with '@' or '`' must be quoted"
            case "%": return "a value that starts with '%' must be quoted"
            default: return nil
            }
        default:
            return nil
        }
    }
}
