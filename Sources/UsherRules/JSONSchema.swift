import UsherJSON
/// A JSON Schema (draft-07), or a part of one, as a JSON value whose objects keep the order they
/// were written in, so the generated files read like hand-written ones (`$schema` and `title`
/// first, a property's `description` before its details).
///
/// The schemas of rule files and bot files are built from the rule language's declaration
/// (`ConditionKind.all`, `ActionKind.all`; see `JSONSchema+RuleFile.swift`). `usher schema`
/// prints them, and `schema/*.json` are the same text, checked by a test.
public indirect enum JSONSchema: Sendable, Equatable {
    case object([Member])
    case array([JSONSchema])
    case string(String)
    case integer(Int)
    case bool(Bool)

    /// One `"key": value` of an object.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONSchema
    }

    /// The value of `key` in an object (the first, if written twice); `nil` for anything else.
    package subscript(key: String) -> JSONSchema? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The names under `properties`, in order: the keys a YAML mapping of this shape may have.
    package var propertyNames: [String] {
        guard case let .object(members)? = self["properties"] else { return [] }
        return members.map(\.key)
    }

    /// This object with `description` as its first member: what editors show on hover.
    package func described(_ description: String) -> JSONSchema {
        guard case let .object(members) = self else { return self }
        return .object([Member(key: "description", value: .string(description))] + members)
    }

    /// The text of the schema, indented by two spaces, with a final newline — the layout of
    /// `schema/*.json`. Non-ASCII characters are written as they are.
    public var text: String {
        var out = ""
        write(to: &out, indent: "")
        return out + "\n"
    }

    private func write(to out: inout String, indent: String) {
        switch self {
        case let .object(members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{\n"
            for (i, m) in members.enumerated() {
                out += indent + "  "
                Self.quote(m.key, to: &out)
                out += ": "
                m.value.write(to: &out, indent: indent + "  ")
                out += i == members.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        case let .array(items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "[\n"
            for (i, item) in items.enumerated() {
                out += indent + "  "
                item.write(to: &out, indent: indent + "  ")
                out += i == items.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case let .string(s): Self.quote(s, to: &out)
        case let .integer(n): out += String(n)
        case let .bool(b): out += b ? "true" : "false"
        }
    }

    /// A string as the project's JSON writer quotes it (UsherJSON).
    private static func quote(_ s: String, to out: inout String) {
        var writer = JSONWriter(capacity: s.utf8.count + 2)
        writer.string(s)
        out += String(decoding: writer.bytes, as: UTF8.self)
    }
}

// Literals, so that schemas are written in Swift much as they read in JSON.
extension JSONSchema: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    /// Keeps the written order (a Swift dictionary would not).
    public init(dictionaryLiteral elements: (String, JSONSchema)...) {
        self = .object(elements.map { Member(key: $0.0, value: $0.1) })
    }
    public init(arrayLiteral elements: JSONSchema...) { self = .array(elements) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
