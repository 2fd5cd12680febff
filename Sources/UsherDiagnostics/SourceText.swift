/// The text of a file, kept so diagnostics can quote the offending line.
public struct SourceText: Sendable {
    public let path: String
    private let text: String
    /// UTF-8 offset of the start of each line.
    private let lineStarts: [Int]

    public init(path: String, text: String) {
        self.path = path
        self.text = text
        var starts = [0]
        var offset = 0
        for byte in text.utf8 {
            offset += 1
            if byte == UInt8(ascii: "\n") { starts.append(offset) }
        }
        lineStarts = starts
    }

    /// The 1-based line, without its line break, or `nil` past the end.
    public func line(_ number: Int) -> Substring? {
        guard number >= 1, number <= lineStarts.count else { return nil }
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: lineStarts[number - 1])
        var end = number < lineStarts.count ? utf8.index(utf8.startIndex, offsetBy: lineStarts[number] - 1) : utf8.endIndex
        if end > start, utf8[utf8.index(before: end)] == UInt8(ascii: "\r") { end = utf8.index(before: end) }
        return text[start..<end]
    }

    public var lineCount: Int { lineStarts.count }
}
