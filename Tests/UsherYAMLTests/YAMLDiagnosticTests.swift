import Testing
import UsherDiagnostics
import UsherYAML

/// One inline file and exactly the diagnostics it must produce.
struct DiagnosticCase: Sendable, CustomTestStringConvertible {
    let name: String
    let bytes: [UInt8]
    let expected: [String]
    /// Whether a document comes back (the YAML could be parsed).
    let parses: Bool
    var limits: YAMLLimits = .default

    init(_ name: String, _ text: String, _ expected: [String], parses: Bool = true, limits: YAMLLimits = .default) {
        self.init(name, bytes: Array(text.utf8), expected, parses: parses, limits: limits)
    }

    init(_ name: String, bytes: [UInt8], _ expected: [String], parses: Bool = true, limits: YAMLLimits = .default) {
        self.name = name
        self.bytes = bytes
        self.expected = expected
        self.parses = parses
        self.limits = limits
    }

    var testDescription: String { name }
}

@Suite("YAML diagnostics")
struct YAMLDiagnosticTests {
    static let cases: [DiagnosticCase] = [
        // Empty files.
        .init("zero bytes", "", ["empty-file@1:1"]),
        .init("blank lines", "  \n\n \t \n", ["empty-file@1:1"]),
        .init("comments only", "# rules\n  # more\n", ["empty-file@1:1"]),
        // Byte-order mark.
        .init("bom", "\u{FEFF}a: 1\n", ["byte-order-mark@1:1"]),
        .init("bom only", "\u{FEFF}", ["byte-order-mark@1:1", "empty-file@1:1"]),
        // Encoding.
        .init("stray byte after CJK", bytes: Array("a: b\nc: 中x".utf8) + [0xFF, 0x0A], ["invalid-utf8@2:6"],
              parses: false),
        .init("truncated sequence", bytes: Array("a: ".utf8) + [0xE4, 0xB8], ["invalid-utf8@1:4"], parses: false),
        .init("truncated before ascii", bytes: Array("a: ".utf8) + [0xE4, 0x41], ["invalid-utf8@1:4"], parses: false),
        .init("overlong", bytes: [0x61, 0x3A, 0x20, 0xC0, 0x80], ["invalid-utf8@1:4"], parses: false),
        .init("surrogate", bytes: [0x61, 0x3A, 0x20, 0xED, 0xA0, 0x80], ["invalid-utf8@1:4"], parses: false),
        .init("above U+10FFFF", bytes: [0x61, 0x3A, 0x20, 0xF4, 0x90, 0x80, 0x80], ["invalid-utf8@1:4"], parses: false),
        .init("utf-16 bom", bytes: [0xFF, 0xFE, 0x61, 0x00], ["invalid-utf8@1:1"], parses: false),
        .init("every bad spot", bytes: Array("a: caf".utf8) + [0xE9] + Array("\nb: cr".utf8) + [0xE8, 0x6D, 0x65, 0x0A]
              + Array("c: ".utf8) + [0xFF, 0xFE, 0x78, 0x0A], ["invalid-utf8@1:7", "invalid-utf8@2:6", "invalid-utf8@3:4"],
              parses: false),
        .init("bad bytes and a control character", bytes: [0x61, 0x3A, 0x20, 0xC3, 0x0A, 0x62, 0x3A, 0x20, 0x07, 0x0A],
              ["invalid-utf8@1:4", "invalid-character@2:4"], parses: false),
        .init("bell character", "a: 1\nb: x\u{7}y\n", ["invalid-character@2:5"], parses: false),
        .init("nul byte", "a: \u{0}\n", ["invalid-character@1:4"], parses: false),
        .init("C1 control", "a: \u{90}\n", ["invalid-character@1:4"], parses: false),
        // Tabs.
        .init("tab-indented key", "a:\n\tb: 1\n", ["tab-indent@2:1"], parses: false),
        .init("tab after spaces", "a: 1\n \tb: 2\n", ["tab-indent@2:2"], parses: false),
        .init("tab-indented item", "- a\n\t- b\n", ["tab-indent@2:1"], parses: false),
        .init("every tab line", "a:\n  b: 1\n\tc: 2\n\td: 3\n", ["tab-indent@3:1", "tab-indent@4:1"], parses: false),
        .init("tab-only line after a value", "a: 1\n\t\nb: 2\n", ["tab-indent@2:1"], parses: false),
        .init("tab after a dash", "a:\n  - x\n  -\ty\n", ["tab-indent@3:4"], parses: false),
        .init("tab at the start of the file", "\ta: 1\n", ["tab-indent@1:1"], parses: false),
        .init("tab breaking a block scalar", "a: |\n  x\n\ty\n", ["tab-indent@3:1"], parses: false),
        .init("tab inside a flow list", "a: [x,\n\ty]\n", []),
        .init("tab inside a quoted value", "a: \"x\n\ty\"\n", []),
        .init("tab inside a block scalar", "a: |\n  x\n  \ty\nb: 1\n", []),
        .init("tab between key and value", "a:\tb\n", []),
        .init("tab before a comment", "a: b\t# c\n", []),
        .init("tab inside an unclosed quote is not blamed", "a: \"x\n\ty\n",
              ["yaml-syntax@3:1"], parses: false),
        // Anchors, aliases, merge keys.
        .init("anchor", "a: &x 1\nb: 2\n", ["anchor@1:4"]),
        .init("anchor after a tag", "a: !!str &x 1\n", ["anchor@1:10"]),
        .init("anchored mapping", "a: &m\n  b: 1\n", ["anchor@1:4"]),
        .init("alias", "a: &x 1\nb: *x\n", ["anchor@1:4", "alias@2:4"]),
        .init("alias in a list", "a: [1, *x]\n", ["alias@1:8"]),
        .init("merge key", "base: {a: 1}\nother:\n  <<: {a: 2}\n", ["merge-key@3:3"]),
        .init("quoted << is a key", "'<<': 1\n", []),
        // Keys.
        .init("duplicate key", "rules:\n  a: 1\n  a: 2\n", ["duplicate-key@3:3"]),
        .init("duplicate flow key", "{a: 1, b: 2, a: 3}\n", ["duplicate-key@1:14"]),
        .init("duplicate quoted key", "a: 1\n'a': 2\n", ["duplicate-key@2:1"]),
        .init("same key in different mappings", "x: {a: 1}\ny: {a: 2}\n", []),
        .init("three times", "a: 1\na: 2\na: 3\n", ["duplicate-key@2:1", "duplicate-key@3:1"]),
        .init("list as key", "[a, b]: c\n", ["complex-key@1:1"]),
        .init("explicit mapping key", "? {a: 1}\n: b\n", ["complex-key@1:3"]),
        // Limits and documents.
        .init("too deep", "a:\n  b:\n    c:\n      d: 1\n", ["too-deep@4:7"], parses: false,
              limits: YAMLLimits(maxBytes: 1 << 20, maxDepth: 3)),
        .init("exactly at the depth limit", "a:\n  b:\n    c: 1\n", [], limits: YAMLLimits(maxBytes: 1 << 20, maxDepth: 3)),
        .init("too large", String(repeating: "a", count: 20), ["file-too-large@1:1"], parses: false,
              limits: YAMLLimits(maxBytes: 10, maxDepth: 64)),
        .init("second document", "a: 1\n---\nb: 2\n", ["multiple-documents@2:1"]),
        .init("explicit first document", "---\na: 1\n", []),
        .init("document after end marker", "a: 1\n...\n---\nb: 2\n", ["multiple-documents@3:1"]),
        .init("text after end marker", "a: 1\n...\nb: 2\n", ["yaml-syntax@3:1"], parses: false),
        .init("tab continuing a plain value", "a: x\n  \ty\n", ["tab-indent@2:3"]),
        // Syntax.
        .init("colon in a value", "a: b: c\n", ["yaml-syntax@1:5"], parses: false),
        .init("bad indentation", "a:\n  b: 1\n c: 2\n", ["yaml-syntax@3:2"], parses: false),
        .init("unclosed quote", "a: \"abc\nb: 1\n", ["yaml-syntax@3:1"], parses: false),
        .init("unknown escape", "r: \"\\d+\"\n", ["yaml-syntax@1:5"], parses: false),
        .init("unclosed list", "a: [1, 2\n", ["yaml-syntax@2:1"], parses: false),
        .init("at sign", "a: @x\n", ["yaml-syntax@1:4"], parses: false),
        .init("list on the key's line", "a: - b\n", ["yaml-syntax@1:4"], parses: false),
        .init("text after a quoted value", "a: \"x\" y\n", ["yaml-syntax@1:8"], parses: false),
        .init("syntax error after valid duplicates", "a: 1\na: 2\nb: [\n", ["duplicate-key@2:1", "yaml-syntax@4:1"],
              parses: false),
    ]

    @Test(arguments: cases)
    func reports(_ c: DiagnosticCase) {
        let (document, diagnostics) = YAMLLoader.load(path: "t.yaml", bytes: c.bytes, limits: c.limits)
        #expect(summary(diagnostics) == c.expected, "\(diagnostics.map(\.headline))")
        #expect((document != nil) == c.parses)
        #expect(diagnostics.allSatisfy { $0.location?.file == "t.yaml" })
    }

    @Test func messages() throws {
        func message(_ text: String, limits: YAMLLimits = .default) -> [String] {
            YAMLLoader.load(path: "t.yaml", text: text, limits: limits).1.map(\.message)
        }
        #expect(message("") == ["the file is empty"])
        #expect(message("\u{FEFF}a: 1") == ["the file starts with a byte-order mark; save it as UTF-8 without BOM"])
        #expect(YAMLLoader.load(path: "t.yaml", bytes: [0x61, 0xFF]).1.map(\.message)
            == ["invalid UTF-8 byte 0xFF; save the file as UTF-8"])
        #expect(message("a: \u{1}") == ["control character U+0001 is not allowed in YAML files; remove it"])
        #expect(message("a:\n\tb: 1") == ["tab character used for indentation; YAML needs spaces"])
        #expect(message("a: &x 1") == ["anchors (&name) are not supported in Usher files; repeat the value or use a $list"])
        #expect(message("a: *x") == ["aliases (*name) are not supported in Usher files; repeat the value or use a $list"])
        #expect(message("<<: {a: 1}") == ["merge keys (<<) are not supported in Usher files; repeat the keys instead"])
        #expect(message("[a]: 1") == ["mapping keys must be plain text"])
        #expect(message("[[1]]", limits: YAMLLimits(maxBytes: 100, maxDepth: 1)) == ["nesting is deeper than 1 levels"])
        #expect(message("a: 1\n---\nb: 2") == ["only one YAML document per file is allowed"])
        #expect(message("a: b: c") == [
            "mapping values are not allowed in this context; a value that contains ': ' must be quoted, "
                + "and a key must start its own line",
        ])
        // A key one space too far in: an indentation problem, at the key, with the column.
        let rule = "rules:\n  - id: refund\n     when: {keywords: [refund]}\n"
        #expect(message(rule) == [
            "wrong indentation: 'when' starts 1 space further in than 'id' on line 2, so YAML reads it as more of "
                + "that line's value; start 'when' at column 5, under 'id'",
        ])
        #expect(summary(load(rule).1) == ["bad-indentation@3:6"])
        #expect(message("version: 1\n\n   rules:\n") == [
            "wrong indentation: 'rules' starts 3 spaces further in than 'version' on line 1, so YAML reads it as more of "
                + "that line's value; start 'rules' at column 1, under 'version'",
        ])
        #expect(message("a:\n  b: 1\n c: 2") == [
            "did not find expected key (while parsing a block mapping that started at line 1, column 1); "
                + "check the indentation: the keys of one mapping must start in the same column",
        ])
        #expect(message("a: \"abc\n") == [
            "found unexpected end of stream (while scanning a quoted scalar that started at line 1, column 4); "
                + "the closing quote is missing",
        ])
        #expect(message(#"r: "\d+""#) == [
            "found unknown escape character (while parsing a quoted scalar that started at line 1, column 4); "
                + #"inside double quotes a backslash starts an escape; use single quotes ('\d+') or double the backslash"#,
        ])
        #expect(message("a: @x") == [
            "found character that cannot start any token; a value that starts with '@' or '`' must be quoted",
        ])
    }

    @Test func duplicateKeyPointsAtTheFirst() throws {
        let (document, diagnostics) = load("rules:\n  a: 1\n  b: 2\n  a: 3\n")
        let d = try #require(diagnostics.first)
        #expect(diagnostics.count == 1)
        #expect(d.severity == .error)
        #expect(d.message == "duplicate key 'a' in this mapping")
        #expect(d.location == SourceLocation(file: "t.yaml", line: 4, column: 3))
        #expect(d.notes.map(\.message) == ["first defined here"])
        #expect(d.notes.first?.location == SourceLocation(file: "t.yaml", line: 2, column: 3))
        // The document is still there, both entries kept, and the subscript gives the first.
        let rules = try #require(document?.root?["rules"])
        #expect(rules.mapping?.count == 3)
        #expect(rules["a"]?.scalar == "1")
    }

    @Test func bomIsStrippedBeforeCounting() throws {
        let (document, diagnostics) = load("\u{FEFF}a: 1\nb: x\n")
        #expect(diagnostics.map(\.severity) == [.warning])
        let root = try #require(document?.root)
        #expect(root["b"]?.start == Mark(line: 2, column: 4))
        #expect(root.mapping?.first?.key.start == Mark(line: 1, column: 1))
        #expect(document?.source.line(1) == "a: 1")
    }

    @Test func emptyFileStillGivesADocument() throws {
        for text in ["", "   \n", "# only a comment\n"] {
            let (document, diagnostics) = load(text)
            let d = try #require(document)
            #expect(d.root == nil)
            #expect(d.path == "t.yaml")
            #expect(summary(diagnostics) == ["empty-file@1:1"])
        }
    }

    @Test func invalidUTF8MessagesShowTheBytesOfEachRun() {
        let latin1: [UInt8] = Array("a: caf".utf8) + [0xE9]
        let cut: [UInt8] = Array("\nb: ".utf8) + [0xE4, 0xB8, 0xFF, 0xFF]
        let many: [UInt8] = Array("\nc: ".utf8) + [UInt8](repeating: 0xFF, count: 12)
        let bytes = latin1 + cut + many
        #expect(YAMLLoader.load(path: "t.yaml", bytes: bytes).1.map(\.message) == [
            "invalid UTF-8 byte 0xE9; save the file as UTF-8",
            "4 bytes of invalid UTF-8 (0xE4 0xB8 0xFF 0xFF); save the file as UTF-8",
            "12 bytes of invalid UTF-8 (0xFF 0xFF 0xFF 0xFF 0xFF 0xFF 0xFF 0xFF …); save the file as UTF-8",
        ])
        #expect(YAMLLoader.load(path: "t.yaml", bytes: [0xFE, 0xFF, 0x00, 0x61]).1.map(\.message)
            == ["the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8"])
    }

    /// A file in Latin-1 has a bad byte on every line: the first 20 are reported, then one line
    /// for the rest, at the first of them.
    @Test func invalidUTF8ReportsAreCapped() throws {
        let line: [UInt8] = Array("- caf".utf8) + [0xE9, 0x0A]
        let bytes = Array([[UInt8]](repeating: line, count: 100).joined())
        let (document, diagnostics) = YAMLLoader.load(path: "t.yaml", bytes: bytes)
        #expect(document == nil)
        #expect(diagnostics.count == 21)
        #expect(summary(Array(diagnostics.prefix(2))) == ["invalid-utf8@1:6", "invalid-utf8@2:6"])
        let last = try #require(diagnostics.last)
        #expect(summary([last]) == ["invalid-utf8@21:6"])
        #expect(last.message == "and 80 more places from here on that are not UTF-8 text; save the file as UTF-8")
    }

    @Test func tabReportsAreCapped() {
        let text = "a:\n" + String(repeating: "\tb: 1\n", count: 50)
        let (_, diagnostics) = load(text)
        #expect(diagnostics.count == 20)
        #expect(diagnostics.allSatisfy { $0.code == "tab-indent" })
    }

    @Test func tooLargeMessage() {
        let big = [UInt8](repeating: 0x61, count: 2 << 20)
        let (document, diagnostics) = YAMLLoader.load(path: "big.yaml", bytes: big)
        #expect(document == nil)
        #expect(diagnostics.map(\.message) == ["the file is 2.0 MiB; the limit is 1.0 MiB"])
        #expect(diagnostics.first?.code == "file-too-large")
        let barely = [UInt8](repeating: 0x61, count: (1 << 20) + 1)
        #expect(YAMLLoader.load(path: "b.yaml", bytes: barely).1.map(\.message)
            == ["the file is 1048577 bytes; the limit is 1048576 bytes"])
    }
}
