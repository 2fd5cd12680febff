import UsherDiagnostics
import UsherYAML

/// Reads the nodes of one test file against its schema, collecting a diagnostic for every problem
/// rather than stopping at the first (the same codes and wording as rule files).
final class RuleTestReader {
    let document: YAMLDocument
    private(set) var diagnostics: [Diagnostic] = []

    init(document: YAMLDocument) { self.document = document }

    /// One `key: value` entry that the schema allows.
    struct Field {
        let key: String
        let keyNode: YAMLNode
        let value: YAMLNode
    }

    func error(_ code: String, _ message: String, at node: YAMLNode) { error(code, message, at: node.location) }

    func error(_ code: String, _ message: String, at location: SourceLocation) {
        diagnostics.append(Diagnostic(.error, code, message, at: location))
    }

    func warning(_ code: String, _ message: String, at node: YAMLNode, notes: [Diagnostic.Note]) {
        diagnostics.append(Diagnostic(.warning, code, message, at: node.location, notes: notes))
    }

    /// The allowed entries of a mapping, by key (the first of duplicates: the YAML loader reports
    /// the others), and the keys in file order. An unknown key is reported with the closest
    /// allowed one, or the whole list when none is close; `nil` when `node` is not a mapping.
    func fields(of node: YAMLNode, _ what: String, keys allowed: [String]) -> (byKey: [String: Field], order: [Field])? {
        guard let pairs = node.mapping else {
            error("wrong-type", "expected \(what) written as 'key: value' lines, found \(node.kindName)", at: node)
            return nil
        }
        var byKey: [String: Field] = [:]
        var order: [Field] = []
        for pair in pairs {
            guard let key = pair.key.scalar else { continue }   // `complex-key`, from the loader
            guard allowed.contains(key) else {
                let hint = Suggestion.closest(to: key, in: allowed).map { "; did you mean '\($0)'?" }
                    ?? "; the keys of \(what) are: \(allowed.joined(separator: ", "))"
                error("unknown-key", "unknown key '\(key)' in \(what)\(hint)", at: pair.key)
                continue
            }
            guard byKey[key] == nil else { continue }
            let field = Field(key: key, keyNode: pair.key, value: pair.value)
            byKey[key] = field
            order.append(field)
        }
        return (byKey, order)
    }

    /// Whether a key of the mapping `node` is an unknown key (already reported) that looks like a
    /// misspelling of one of `wanted`: then "missing 'name'" would only repeat that report.
    func hasMisspelling(of wanted: [String], in node: YAMLNode, allowed: [String]) -> Bool {
        (node.mapping ?? []).contains { pair in
            guard let key = pair.key.scalar, !allowed.contains(key) else { return false }
            return Suggestion.closest(to: key, in: allowed).map(wanted.contains) ?? false
        }
    }

    /// A scalar's text; an empty value (`key:`) or a list or mapping is reported.
    func string(_ node: YAMLNode, _ what: String) -> String? {
        guard case let .scalar(text, _) = node.content else {
            error("wrong-type", "expected text for \(what), found \(node.kindName)", at: node)
            return nil
        }
        if node.isNull {
            error("wrong-type", "\(what) is empty; write a value after the colon (\"\" for an empty text)", at: node)
            return nil
        }
        return text
    }

    /// A list of texts; a single text counts as a list of one.
    func strings(_ node: YAMLNode, _ what: String) -> [(text: String, node: YAMLNode)]? {
        switch node.content {
        case let .sequence(items):
            var out: [(text: String, node: YAMLNode)] = []
            var ok = true
            for item in items {
                if let s = string(item, "an item of \(what)") { out.append((s, item)) } else { ok = false }
            }
            return ok ? out : nil
        case .mapping:
            error("wrong-type", "expected a list for \(what), found a mapping", at: node)
            return nil
        case .scalar:
            return string(node, what).map { [($0, node)] }
        }
    }

    /// Where the character at `offset` of a scalar's value is (for regex errors).
    func location(ofOffset offset: Int, in node: YAMLNode) -> SourceLocation {
        document.location(ofScalarOffset: offset, in: node)
    }
}
