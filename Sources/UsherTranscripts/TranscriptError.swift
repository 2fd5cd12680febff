/// A problem with a transcript: a bad line (which `--skip-bad-lines` may skip) or a file that
/// cannot be read at all (which stops the replay). The CLI exits 65 for either.
public struct TranscriptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable, kebab-case code (`bad-json`, `unknown-role`, `corrupt-gzip`, …).
    public var code: String
    /// What is wrong and, where it can say, how to fix it.
    public var message: String
    /// The transcript file as the user named it.
    public var file: String
    /// 1-based line, when the problem belongs to one line.
    public var line: Int?
    /// 1-based column in Unicode scalars, when known.
    public var column: Int?
    /// `true` when only this line is bad and reading can go on with the next one.
    public var isLineError: Bool

    /// An error about `file` (and a line and column of it, when known).
    public init(_ code: String, _ message: String, file: String, line: Int? = nil, column: Int? = nil,
                isLineError: Bool = true) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.isLineError = isLineError
    }

    /// Compiler style: `file:line:col: error: [code] message`.
    public var description: String {
        var place = file
        if let line { place += ":\(line)" }
        if let line = line, let column, line > 0 { place += ":\(column)" }
        return "\(place): error: [\(code)] \(message)"
    }
}
