/// A position in a YAML file: 1-based line and column, columns counted in Unicode scalars.
///
/// libyaml reports 0-based marks that count characters; the loader adds one to both.
public struct Mark: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// 1-based line.
    public let line: Int
    /// 1-based column, in Unicode scalars.
    public let column: Int

    /// A mark at `line`:`column`, both 1-based.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `line:column`.
    public var description: String { "\(line):\(column)" }

    /// Earlier in the file first.
    public static func < (a: Mark, b: Mark) -> Bool { (a.line, a.column) < (b.line, b.column) }
}
