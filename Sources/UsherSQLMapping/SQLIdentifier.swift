/// Plain SQL identifiers: ASCII letters, digits and `_`, not starting with a digit, at most 63
/// bytes (PostgreSQL's NAMEDATALEN - 1). The adapters can quote such a name without escaping it.
enum SQLIdentifier {
    static let maxBytes = 63

    /// What is wrong with `name`, and the offset (in Unicode scalars) of the character to point
    /// at; `nil` when it is a plain identifier.
    static func problem(_ name: Substring) -> (offset: Int, reason: String)? {
        if name.isEmpty { return (0, "the name is empty") }
        for (i, u) in name.unicodeScalars.enumerated() {
            let letter = ("a"..."z").contains(u) || ("A"..."Z").contains(u) || u == "_"
            let digit = ("0"..."9").contains(u)
            if letter || (digit && i > 0) { continue }
            if digit { return (i, "a name cannot start with a digit") }
            if u == " " { return (i, "spaces are not allowed") }
            return (i, "'\(u)' is not allowed")
        }
        if name.utf8.count > maxBytes {
            return (maxBytes, "a name can be at most \(maxBytes) bytes, this one is \(name.utf8.count)")
        }
        return nil
    }

    /// The problem with a table written as `table` or `schema.table`, if any.
    static func tableProblem(_ name: String) -> (offset: Int, reason: String)? {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count > 2 {
            let secondDot = name.unicodeScalars.enumerated().filter { $0.element == "." }.dropFirst().first!.offset
            return (secondDot, "it has more than one '.'")
        }
        var start = 0
        for part in parts {
            if let p = problem(part) { return (start + p.offset, p.reason) }
            start += part.unicodeScalars.count + 1
        }
        return nil
    }
}
