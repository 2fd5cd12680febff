import Testing
import UsherDiagnostics

/// The source excerpt under a diagnostic: the line, a caret under the column, and no more than
/// a screen's width of a long line.
@Suite struct DiagnosticPrinterTests {
    func render(_ line: String, column: Int) -> String {
        var printer = DiagnosticPrinter()
        printer.add(SourceText(path: "r.yaml", text: "version: 1\n" + line + "\nnext: 2\n"))
        return printer.render(.error("invalid-regex", "bad", at: SourceLocation(file: "r.yaml", line: 2, column: column)))
    }

    @Test func aShortLineIsQuotedWhole() {
        #expect(render("  - regex: 'a('", column: 15) == """
            r.yaml:2:15: error: [invalid-regex] bad
                  - regex: 'a('
                              ^

            """)
    }

    @Test func aLongLineIsCutAroundTheColumn() throws {
        // An 879 KB regex on one line, the error at its end: the excerpt stays one screen wide.
        let regex = String(repeating: "a", count: 879_000) + "(x"
        let line = "    when: {regex: '" + regex + "'}"
        let column = line.unicodeScalars.count - 1   // the closing quote
        let out = render(line, column: column)
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4)
        #expect(out.utf8.count < 400, "\(out.utf8.count) bytes")
        let quoted = String(lines[1].dropFirst(4)), caret = String(lines[2].dropFirst(4))
        #expect(quoted.hasPrefix("…aaa") && quoted.hasSuffix("(x'}"))
        #expect(quoted.unicodeScalars.count == DiagnosticPrinter.maxExcerpt + 1)
        // The caret stands under the character the column names.
        let under = quoted.unicodeScalars[quoted.unicodeScalars.index(quoted.unicodeScalars.startIndex, offsetBy: caret.count - 1)]
        #expect(caret.hasSuffix("^") && under == "'")
    }

    @Test func aLongLineWithTheColumnNearItsStartIsCutAtTheEnd() {
        let line = "  - id: x" + String(repeating: "y", count: 500)
        let out = render(line, column: 9)
        #expect(out.contains("\n      - id: x" + String(repeating: "y", count: DiagnosticPrinter.maxExcerpt - 9) + "…\n"))
        #expect(out.contains("\n            ^\n"))
    }

    @Test func aCaretInTheMiddleOfALongLine() {
        let line = String(repeating: "a", count: 1000) + "!" + String(repeating: "b", count: 1000)
        let out = render(line, column: 1001)
        let lines = out.split(separator: "\n")
        let quoted = String(lines[1].dropFirst(4)), caret = String(lines[2].dropFirst(4))
        #expect(quoted.hasPrefix("…") && quoted.hasSuffix("…"))
        #expect(caret.count == DiagnosticPrinter.maxExcerpt / 3 + 2)
        #expect(Array(quoted)[caret.count - 1] == "!")
    }
}
