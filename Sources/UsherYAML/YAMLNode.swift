public import UsherDiagnostics

/// One node of a parsed YAML document, immutable, with the place it was written.
public struct YAMLNode: Sendable {
    /// What a node holds. Scalars stay text: the loader never guesses numbers, booleans or nulls.
    public enum Content: Sendable {
        /// Text and how it was written.
        case scalar(String, ScalarStyle)
        /// Items in file order.
        case sequence([YAMLNode])
        /// Entries in file order, duplicates included (they are reported as `duplicate-key`).
        case mapping([YAMLPair])
    }

    /// What the node holds.
    public let content: Content
    /// Where the node starts: its tag or anchor when it has one, else its first character
    /// (the opening quote, `[`, `|`, or a block collection's first key or `-`).
    public let start: Mark
    /// Just past the node's last character.
    public let end: Mark
    /// The explicit tag as written (`!!str`, `!custom`), or `nil` when there is none.
    public let tag: String?
    /// The path of the document the node belongs to.
    public let file: String

    /// A node; the loader builds these, tests and tools may build their own.
    public init(_ content: Content, start: Mark, end: Mark, tag: String? = nil, file: String) {
        self.content = content
        self.start = start
        self.end = end
        self.tag = tag
        self.file = file
    }

    /// The text of a scalar, else `nil`.
    public var scalar: String? {
        if case .scalar(let text, _) = content { return text }
        return nil
    }

    /// The style of a scalar, else `nil`.
    public var scalarStyle: ScalarStyle? {
        if case .scalar(_, let style) = content { return style }
        return nil
    }

    /// The items of a sequence, else `nil`.
    public var sequence: [YAMLNode]? {
        if case .sequence(let items) = content { return items }
        return nil
    }

    /// The entries of a mapping, else `nil`.
    public var mapping: [YAMLPair]? {
        if case .mapping(let pairs) = content { return pairs }
        return nil
    }

    /// Whether this is an untagged plain scalar YAML reads as null: empty, `~`, `null`, `Null`
    /// or `NULL`. `""` and `'null'` are quoted, so they are text, not null.
    public var isNull: Bool {
        guard tag == nil, case .scalar(let text, .plain) = content else { return false }
        switch text {
        case "", "~", "null", "Null", "NULL": return true
        default: return false
        }
    }

    /// `a string`, `a list` or `a mapping`, for messages like "expected a list, found a mapping".
    public var kindName: String {
        switch content {
        case .scalar: return "a string"
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// The node's start as a diagnostic location.
    public var location: SourceLocation {
        SourceLocation(file: file, line: start.line, column: start.column)
    }

    /// The value of the first entry whose key is the scalar `key`; `nil` when there is none or
    /// this is not a mapping.
    public subscript(key: String) -> YAMLNode? {
        guard case .mapping(let pairs) = content else { return nil }
        for pair in pairs where pair.key.scalar == key { return pair.value }
        return nil
    }
}
