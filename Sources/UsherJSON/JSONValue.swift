/// One JSON value read by `JSONReader.parse` or `JSONReader.value()`, with the byte offset
/// where it starts (for error columns).
package struct JSONValue: Sendable {
    package enum Kind: Sendable {
        /// Members in the order written; keys are unique (duplicates are an error).
        case object([(key: String, value: JSONValue)])
        case array([JSONValue])
        case string(String)
        /// The number as written, so that `"id": 42` reads back as `42`.
        case number(String)
        case bool(Bool)
        case null
    }

    package var kind: Kind
    /// Byte offset of the value's first byte in the text.
    package var offset: Int

    package init(kind: Kind, offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// The member named `key` of an object, else `nil`.
    package subscript(key: String) -> JSONValue? {
        guard case let .object(members) = kind else { return nil }
        for m in members where m.key == key { return m.value }
        return nil
    }

    /// What kind of value this is, for error messages ("expected a string, got a number").
    package var typeName: String {
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
