/// Renders diagnostics the way compilers do: the headline, the source line, a caret under the
/// column, then the notes.
public struct DiagnosticPrinter: Sendable {
    private var sources: [String: SourceText] = [:]
    public var colour: Bool

    public init(colour: Bool = false) { self.colour = colour }

    /// Makes a file's text available for quoting.
    public mutating func add(_ source: SourceText) { sources[source.path] = source }

    public mutating func add(_ sources: [SourceText]) { for s in sources { add(s) } }

    /// The full rendering of one diagnostic, ending in a newline.
    public func render(_ d: Diagnostic) -> String {
        var out = paint(d.headline, d.severity) + "\n"
        out += excerpt(at: d.location)
        for note in d.notes {
            let place = note.location.map { "\($0): " } ?? ""
            out += "\(place)note: \(note.message)\n"
            out += excerpt(at: note.location)
        }
        return out
    }

    /// All of them, sorted, followed by a count line when there are any.
    public func render(all diagnostics: [Diagnostic]) -> String {
        diagnostics.sortedForDisplay().map(render).joined()
    }

    /// The most characters of a source line quoted; a longer line is cut around the column
    /// (a one-line rule file can hold an 879 KB regex, which printed whole would bury the error).
    public static let maxExcerpt = 120

    private func excerpt(at location: SourceLocation?) -> String {
        guard let loc = location, let line = sources[loc.file]?.line(loc.line) else { return "" }
        let scalars = Array(line.unicodeScalars)
        let column = max(0, loc.column - 1)
        // The window: the whole line when it fits, else `maxExcerpt` characters with the column
        // a third of the way in (what led up to the problem matters less than the problem).
        var start = 0, end = scalars.count
        if scalars.count > Self.maxExcerpt {
            start = min(max(0, column - Self.maxExcerpt / 3), scalars.count - Self.maxExcerpt)
            end = start + Self.maxExcerpt
        }
        var text = start > 0 ? "…" : ""
        text.unicodeScalars.append(contentsOf: scalars[start..<end])
        if end < scalars.count { text += "…" }
        // Keep tabs as tabs so the caret lines up with what the terminal shows.
        var pad = start > 0 ? " " : ""
        for scalar in scalars[start..<min(max(start, column), end)] {
            pad.append(scalar == "\t" ? "\t" : (Self.isWide(scalar) ? "  " : " "))
        }
        return "    \(text)\n    \(pad)^\n"
    }

    /// East Asian wide characters take two terminal cells.
    static func isWide(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF,
             0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
             0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    private func paint(_ s: String, _ severity: Diagnostic.Severity) -> String {
        guard colour else { return s }
        let code = severity == .error ? "31" : severity == .warning ? "33" : "36"
        return "\u{1B}[1;\(code)m\(s)\u{1B}[0m"
    }
}
