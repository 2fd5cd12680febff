/// A reply text with `{{name}}` and `{{name|fallback}}` placeholders. Templates only substitute:
/// no code, no loops, no file or network access.
public struct Template: Sendable, Hashable {
    public enum Part: Sendable, Hashable {
        case literal(String)
        case variable(name: String, fallback: String?)
    }

    public let source: String
    public let parts: [Part]

    /// Variables the template uses, in order of appearance.
    public var variables: [String] {
        parts.compactMap { if case let .variable(name, _) = $0 { name } else { nil } }
    }

    /// Template text with no placeholders.
    public init(literal text: String) {
        source = text
        parts = text.isEmpty ? [] : [.literal(text)]
    }

    /// Parses `source`; on a malformed placeholder returns the problem and the scalar offset of
    /// its `{{`.
    public static func parse(_ source: String) -> Result<Template, TemplateError> {
        var parts: [Part] = []
        var literal = ""
        let scalars = Array(source.unicodeScalars)
        var i = 0
        while i < scalars.count {
            if scalars[i] == "{", i + 1 < scalars.count, scalars[i + 1] == "{" {
                let open = i
                var j = i + 2
                var inner = ""
                var closed = false
                while j < scalars.count {
                    if scalars[j] == "}", j + 1 < scalars.count, scalars[j + 1] == "}" { closed = true; break }
                    if scalars[j] == "{", j + 1 < scalars.count, scalars[j + 1] == "{" { break }
                    inner.unicodeScalars.append(scalars[j])
                    j += 1
                }
                guard closed else {
                    return .failure(TemplateError(message: "'{{' is never closed; write '{{name}}'", offset: open))
                }
                let (rawName, fallback): (Substring, String?) = {
                    if let bar = inner.firstIndex(of: "|") {
                        return (inner[..<bar], String(inner[inner.index(after: bar)...]))
                    }
                    return (inner[...], nil)
                }()
                let name = rawName.trimmingCharacters(in: " ")
                guard isValidName(name) else {
                    let shown = name.isEmpty ? "an empty name" : "'\(name)'"
                    return .failure(TemplateError(
                        message: "\(shown) is not a template variable; use letters, digits, '_' and '.', as in '{{order}}' or '{{customer.name}}'",
                        offset: open))
                }
                if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
                parts.append(.variable(name: name, fallback: fallback))
                i = j + 2
            } else {
                literal.unicodeScalars.append(scalars[i])
                i += 1
            }
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        return .success(Template(source: source, parts: parts))
    }

    private init(source: String, parts: [Part]) {
        self.source = source
        self.parts = parts
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic || first == "_" else {
            return false
        }
        return name.unicodeScalars.allSatisfy {
            $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_" || $0 == "."
        } && !name.hasSuffix(".") && !name.contains("..")
    }

    /// Substitutes variables; a missing one takes its fallback, or the empty string.
    public func render(_ lookup: (String) -> String?) -> String {
        render(lookup, encoding: nil)
    }

    /// Substitutes variables as `render(_:)` does, each value (or fallback) passed through
    /// `encode` first: a link's placeholders are percent-encoded, its written text is not.
    public func render(_ lookup: (String) -> String?, encoding encode: ((String) -> String)?) -> String {
        if parts.count == 1, case let .literal(s) = parts[0] { return s }
        var out = ""
        for part in parts {
            switch part {
            case let .literal(s): out += s
            case let .variable(name, fallback):
                let value = lookup(name) ?? fallback ?? ""
                out += encode.map { $0(value) } ?? value
            }
        }
        return out
    }
}

/// A malformed template placeholder.
public struct TemplateError: Error, Sendable, Hashable {
    public let message: String
    /// Offset of the problem in Unicode scalars into the template text.
    public let offset: Int
}

extension StringProtocol {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
