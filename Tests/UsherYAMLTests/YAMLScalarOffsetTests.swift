import Testing
import UsherDiagnostics
import UsherYAML

/// `location(ofScalarOffset:in:)`: where a character of a value was written.
@Suite("YAML scalar offsets")
struct YAMLScalarOffsetTests {
    /// One value, the offset of a character in it, and where that character is in the file.
    struct Case: Sendable, CustomTestStringConvertible {
        let yaml: String
        let offset: Int
        let line: Int
        let column: Int
        var testDescription: String { "\(yaml.debugDescription) @\(offset)" }
    }

    static let cases: [Case] = [
        // Plain: the value starts at column 8.
        Case(yaml: "regex: ab(c", offset: 0, line: 1, column: 8),
        Case(yaml: "regex: ab(c", offset: 2, line: 1, column: 10),
        Case(yaml: "regex: ab(c", offset: 4, line: 1, column: 12),  // just past the end
        Case(yaml: "regex: ab(c", offset: 99, line: 1, column: 12),  // clamped
        Case(yaml: "regex: ab(c", offset: -5, line: 1, column: 8),
        Case(yaml: "regex: ab(c  # why", offset: 3, line: 1, column: 11),
        // Single-quoted: the opening quote, then `''` counts twice in the file.
        Case(yaml: "regex: 'a(b'", offset: 1, line: 1, column: 10),
        Case(yaml: "regex: 'it''s (x'", offset: 2, line: 1, column: 11),
        Case(yaml: "regex: 'it''s (x'", offset: 3, line: 1, column: 13),
        Case(yaml: "regex: 'it''s (x'", offset: 5, line: 1, column: 15),
        // Double-quoted: escapes are longer in the file than in the value.
        Case(yaml: #"regex: "a\\d(""#, offset: 1, line: 1, column: 10),
        Case(yaml: #"regex: "a\\d(""#, offset: 2, line: 1, column: 12),
        Case(yaml: #"regex: "a\\d(""#, offset: 3, line: 1, column: 13),
        Case(yaml: #"regex: "\u4E2Dx(""#, offset: 1, line: 1, column: 15),
        Case(yaml: #"regex: "\x41\U0001F600(""#, offset: 2, line: 1, column: 23),
        // CJK text: columns are Unicode scalars.
        Case(yaml: "键: 中文(", offset: 2, line: 1, column: 6),
        Case(yaml: "键: '中''文('", offset: 3, line: 1, column: 9),
        // Folded over lines.
        Case(yaml: "regex: ab\n  cd(e", offset: 3, line: 2, column: 3),
        Case(yaml: "regex: ab\n  cd(e", offset: 5, line: 2, column: 5),
        Case(yaml: "regex: 'ab\n  cd(e'", offset: 5, line: 2, column: 5),
        Case(yaml: "regex: \"ab\\\n  cd(e\"", offset: 4, line: 2, column: 5),
        // Blocks.
        Case(yaml: "regex: |\n  abc\n  d(e\n", offset: 5, line: 3, column: 4),
        Case(yaml: "regex: >\n  abc\n  d(e\n", offset: 5, line: 3, column: 4),
        Case(yaml: "regex: |\n  abc\n    d(e\n", offset: 7, line: 3, column: 6),
        // In a list, with a tag in front.
        Case(yaml: "r:\n  - x\n  - !!str y(z", offset: 1, line: 3, column: 12),
    ]

    @Test(arguments: cases)
    func location(_ c: Case) throws {
        let (document, diagnostics) = load(c.yaml)
        #expect(diagnostics.isEmpty, "\(diagnostics.map(\.headline))")
        let doc = try #require(document)
        let root = try #require(doc.root)
        var node = try #require(root.mapping?.first?.value)
        if let last = node.sequence?.last { node = last }
        #expect(doc.location(ofScalarOffset: c.offset, in: node)
            == SourceLocation(file: "t.yaml", line: c.line, column: c.column))
    }

    @Test func nonScalarsFallBackToTheirStart() throws {
        let (document, _) = load("a:\n  - [x]\n")
        let doc = try #require(document)
        let list = try #require(doc.root?["a"])
        #expect(doc.location(ofScalarOffset: 3, in: list) == list.location)
    }

    @Test func everyCharacterOfAnEscapedValueMapsBack() throws {
        // Each value character must land on a source character that produces it (or on the
        // backslash of its escape).
        let yaml = #"r: "a\tb\\c\"d\u00e9 \x41""#
        let (document, _) = load(yaml)
        let doc = try #require(document)
        let node = try #require(doc.root?["r"])
        let line = Array(yaml.unicodeScalars)
        for (i, v) in try #require(node.scalar).unicodeScalars.enumerated() {
            let at = doc.location(ofScalarOffset: i, in: node)
            let c = line[at.column - 1]
            #expect(c == v || c == "\\", "offset \(i): \(v) vs \(c)")
        }
    }
}
