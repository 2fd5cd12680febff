package import UsherDiagnostics
package import Foundation

/// Reads schema-checked values out of YAML nodes, collecting a diagnostic for every problem
/// instead of stopping at the first. One per loaded document. `package`: bot and rule files
/// (UsherRules) and the SQL mapping file (UsherSQLMapping) are read with it.
package final class NodeReader {
    package let document: YAMLDocument
    package private(set) var diagnostics: [Diagnostic] = []

    package init(document: YAMLDocument) { self.document = document }

    package var file: String { document.path }

    package func error(_ code: String, _ message: String, at node: YAMLNode, notes: [Diagnostic.Note] = []) {
        diagnostics.append(.error(code, message, at: node.location, notes: notes))
    }

    package func warning(_ code: String, _ message: String, at node: YAMLNode, notes: [Diagnostic.Note] = []) {
        diagnostics.append(.warning(code, message, at: node.location, notes: notes))
    }

    package func report(_ d: Diagnostic) { diagnostics.append(d) }

    /// The pairs of a mapping whose keys are all in `allowed`; reports unknown keys (with a
    /// suggestion) and a node that is not a mapping. `context` names the thing for messages
    /// ("a rule", "the bot file"). `explain` may give an unknown key a message of its own, for
    /// a key that is known somewhere else (a condition written at the level of a rule).
    package func mapping(_ node: YAMLNode, _ context: String, allowed: [String],
                         explain: (YAMLPair) -> String? = { _ in nil }) -> [String: YAMLNode]? {
        guard let pairs = node.mapping else {
            error("wrong-type", "expected \(context) written as a mapping of 'key: value' lines, found \(node.kindName)", at: node)
            return nil
        }
        var result: [String: YAMLNode] = [:]
        for pair in pairs {
            guard let key = pair.key.scalar else { continue }   // the YAML loader reported it
            if allowed.contains(key) {
                if result[key] == nil { result[key] = pair.value }
            } else if let message = explain(pair) {
                error("unknown-key", message, at: pair.key)
            } else {
                error("unknown-key",
                      "unknown key '\(key)' in \(context)\(Suggestion.hint(for: key, in: allowed))"
                        + (Suggestion.closest(to: key, in: allowed) == nil
                           ? "; expected one of: \(allowed.joined(separator: ", "))" : ""),
                      at: pair.key)
            }
        }
        return result
    }

    /// Reports a required key that is missing.
    package func require(_ value: YAMLNode?, _ key: String, in owner: YAMLNode, _ context: String, example: String) -> YAMLNode? {
        if value == nil {
            error("missing-key", "\(context) needs '\(key)'; add a line like '\(example)'", at: owner)
        }
        return value
    }

    /// A scalar as text. Reports a list or mapping.
    package func text(_ node: YAMLNode, _ what: String) -> String? {
        if let s = node.scalar, !node.isNull || node.tag != nil { return s }
        if node.isNull {
            error("wrong-type", "\(what) is empty; write a value after the colon", at: node)
            return nil
        }
        error("wrong-type", "expected text for \(what), found \(node.kindName)", at: node)
        return nil
    }

    /// A list of scalars; a single scalar counts as a one-item list.
    package func texts(_ node: YAMLNode, _ what: String) -> [(String, YAMLNode)]? {
        if let items = node.sequence {
            var out: [(String, YAMLNode)] = []
            for item in items {
                if let s = text(item, "an item of \(what)") { out.append((s, item)) }
            }
            return out
        }
        if node.mapping != nil {
            error("wrong-type", "expected a list for \(what), found a mapping", at: node)
            return nil
        }
        return text(node, what).map { [($0, node)] }
    }

    package func bool(_ node: YAMLNode, _ what: String) -> Bool? {
        guard let s = text(node, what) else { return nil }
        switch s {
        case "true": return true
        case "false": return false
        default:
            let hint = ["yes", "on", "y", "True", "TRUE"].contains(s) ? "true"
                : ["no", "off", "n", "False", "FALSE"].contains(s) ? "false" : nil
            error("wrong-type", "expected true or false for \(what), found '\(s)'"
                    + (hint.map { "; write '\($0)'" } ?? ""), at: node)
            return nil
        }
    }

    package func integer(_ node: YAMLNode, _ what: String, in range: ClosedRange<Int>) -> Int? {
        guard let s = text(node, what) else { return nil }
        guard let n = Int(s) ?? Int(s.filter { $0 != "_" }) else {
            error("wrong-type", "expected a whole number for \(what), found '\(s)'", at: node)
            return nil
        }
        guard range.contains(n) else {
            let bound = range.upperBound == Int.max ? "at least \(range.lowerBound)"
                : "between \(range.lowerBound) and \(range.upperBound)"
            error("out-of-range", "\(what) must be \(bound), found \(n)", at: node)
            return nil
        }
        return n
    }

    /// `30s`, `10m`, `2h`, `1d`, or combinations like `1h30m`.
    package func duration(_ node: YAMLNode, _ what: String) -> TimeInterval? {
        guard let s = text(node, what) else { return nil }
        guard let seconds = DurationText.parse(s) else {
            error("invalid-duration", "'\(s)' is not a duration for \(what); write a number and a unit: 30s, 10m, 2h, 1d (or 1h30m)", at: node)
            return nil
        }
        return seconds
    }

    /// A node as it is written in the file, when it can stand inside brackets on one line
    /// (`[refund, refunds]`, `"Hi!"`, `refund`); `nil` for a block list or mapping, a `|` or
    /// `>` block, or a node that spans lines.
    package func written(_ node: YAMLNode) -> String? {
        guard node.start.line == node.end.line, let line = document.source.line(node.start.line) else { return nil }
        let scalars = Array(line.unicodeScalars)
        let from = min(max(0, node.start.column - 1), scalars.count), to = min(max(from, node.end.column - 1), scalars.count)
        guard from < to else { return nil }
        switch node.content {
        case .scalar(_, .literal), .scalar(_, .folded): return nil
        case .scalar: break
        case .sequence, .mapping: guard scalars[from] == "[" || scalars[from] == "{" else { return nil }
        }
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars[from..<to])
        return text
    }

    /// The location of a character inside a scalar (for regex and template errors).
    package func location(ofOffset offset: Int, in node: YAMLNode) -> SourceLocation {
        document.location(ofScalarOffset: offset, in: node)
    }
}
