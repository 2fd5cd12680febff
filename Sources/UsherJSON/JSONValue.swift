/// One JSON value read by `JSONReader.parse` or `JSONReader.value()`, with the byte offset
/// where it starts (for error columns).
public struct JSONValue: Sendable {
    /// What the value is, with its contents.
    public enum Kind: Sendable {
        /// Members in the order written; keys are unique (duplicates are an error).
        case object([(key: String, value: JSONValue)])
        case array([JSONValue])
        case string(String)
        /// The number as written, so that `"id": 42` reads back as `42`.
        case number(String)
        case bool(Bool)
        case null
    }

    /// What the value is.
    public var kind: Kind
    /// Byte offset of the value's first byte in the text.
    public var offset: Int

    /// A value of `kind` starting at byte `offset`.
    public init(kind: Kind, offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// The member named `key` of an object, else `nil`.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(members) = kind else { return nil }
        for m in members where m.key == key { return m.value }
        return nil
    }

    /// What kind of value this is, for error messages ("expected a string, got a number").
    public var typeName: String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "true or false"
        case .null: "null"
        }
    }
}
