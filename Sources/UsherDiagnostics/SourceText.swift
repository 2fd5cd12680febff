/// The text of a file, kept so diagnostics can quote the offending line.
public struct SourceText: Sendable {
    public let path: String
    private let lines: [Substring]

    public init(path: String, text: String) {
        self.path = path
        self.lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
    }

    /// The 1-based line, without its line break, or `nil` past the end.
    public func line(_ number: Int) -> Substring? {
        number >= 1 && number <= lines.count ? lines[number - 1] : nil
    }

    public var lineCount: Int { lines.count }
}
