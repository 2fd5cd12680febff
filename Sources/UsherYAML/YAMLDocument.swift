public import UsherDiagnostics

/// One parsed YAML file: its text, for quoting in diagnostics, and its node tree.
public struct YAMLDocument: Sendable {
    /// The path as the caller named it.
    public let path: String
    /// The text, without a byte-order mark, for quoting in diagnostics.
    public let source: SourceText
    /// The document's top node; `nil` when the file holds no document (`empty-file`).
    public let root: YAMLNode?
    /// The text as libyaml saw it, for mapping marks to characters.
    let sourceMap: SourceMap

    init(path: String, source: SourceText, root: YAMLNode?, sourceMap: SourceMap) {
        self.path = path
        self.source = source
        self.root = root
        self.sourceMap = sourceMap
    }

    /// The location of the character at `offset` (in Unicode scalars) of a scalar node's value,
    /// for problems found inside a value, such as a regular expression's error offset.
    ///
    /// Exact for plain, single-quoted (`''` escapes) and double-quoted (backslash escapes)
    /// scalars, on one line or folded over several, and for literal and folded blocks with
    /// automatic indentation. `offset` equal to the value's length is the place just past it;
    /// offsets out of range are clamped. Anything the loader cannot map exactly (a node that is
    /// not a scalar, or not from this document) gets the start of the node.
    public func location(ofScalarOffset offset: Int, in node: YAMLNode) -> SourceLocation {
        guard node.file == path, case .scalar(let value, let style) = node.content,
              let start = sourceMap.index(of: node.start)
        else { return node.location }
        let end = sourceMap.index(of: node.end) ?? sourceMap.scalars.count
        guard let positions = ScalarPositions.positions(of: value, style: style, start: start, end: end,
                                                        in: sourceMap.scalars)
        else { return node.location }
        let mark = sourceMap.mark(at: positions[max(0, min(offset, positions.count - 1))])
        return SourceLocation(file: node.file, line: mark.line, column: mark.column)
    }
}
