import Testing
import UsherDiagnostics
import UsherYAML

@Suite("YAML tree")
struct YAMLTreeTests {
    @Test func nestedMarks() throws {
        let root = try root("""
            version: 1
            rules:
              - id: greet
                when:
                  keywords: [hi, "good day"]
            """)
        #expect(root.start == Mark(line: 1, column: 1))
        #expect(root.kindName == "a mapping")
        #expect(root.mapping?.map(\.key.scalar) == ["version", "rules"])
        let rules = try #require(root["rules"])
        #expect(rules.kindName == "a list")
        #expect(rules.start == Mark(line: 3, column: 3))
        let rule = try #require(rules.sequence?.first)
        #expect(rule.start == Mark(line: 3, column: 5))
        #expect(rule["id"]?.scalar == "greet")
        #expect(rule["id"]?.start == Mark(line: 3, column: 9))
        #expect(rule["id"]?.end == Mark(line: 3, column: 14))
        let keywords = try #require(rule["when"]?["keywords"])
        #expect(keywords.start == Mark(line: 5, column: 17))
        #expect(keywords.end == Mark(line: 5, column: 33))
        #expect(keywords.sequence?.map(\.scalar) == ["hi", "good day"])
        #expect(keywords.sequence?.map(\.start) == [Mark(line: 5, column: 18), Mark(line: 5, column: 22)])
        #expect(keywords.location == SourceLocation(file: "t.yaml", line: 5, column: 17))
        // A block collection ends with its last entry, not at the next line.
        #expect(rules.end == Mark(line: 5, column: 33))
        #expect(root["missing"] == nil)
        #expect(rules["id"] == nil)
    }

    @Test func flowMapping() throws {
        let root = try root("limits: {replies: 3, within: 1m}\n")
        let limits = try #require(root["limits"])
        #expect(limits.start == Mark(line: 1, column: 9))
        #expect(limits.end == Mark(line: 1, column: 33))
        #expect(limits["within"]?.scalar == "1m")
        #expect(limits["within"]?.start == Mark(line: 1, column: 30))
    }

    @Test func scalarsStayText() throws {
        let root = try root("a: no\nb: off\nc: yes\nd: ~\ne: 1e3\nf:\ng: null\nh: ''\ni: 'null'\nj: 0x1F\n")
        let values = try #require(root.mapping).map { ($0.key.scalar!, $0.value) }
        #expect(values.map { $0.1.scalar } == ["no", "off", "yes", "~", "1e3", "", "null", "", "null", "0x1F"])
        #expect(values.filter { $0.1.isNull }.map(\.0) == ["d", "f", "g"])
        #expect(values.allSatisfy { $0.1.kindName == "a string" && $0.1.tag == nil })
    }

    @Test(arguments: [
        ("a: plain text", "plain text", ScalarStyle.plain),
        ("a: 'it''s'", "it's", .singleQuoted),
        (#"a: "tab\there \u4E2D""#, "tab\there 中", .doubleQuoted),
        ("a: |\n  line 1\n  line 2\n", "line 1\nline 2\n", .literal),
        ("a: |-\n  kept\n\n", "kept", .literal),
        ("a: >\n  folded\n  text\n\n  para\n", "folded text\npara\n", .folded),
        ("a: multi\n  line plain\n", "multi line plain", .plain),
        ("a: \"two\n\n  breaks\"", "two\nbreaks", .doubleQuoted),
    ])
    func styles(yaml: String, text: String, style: ScalarStyle) throws {
        let value = try #require(try root(yaml)["a"])
        #expect(value.scalar == text)
        #expect(value.scalarStyle == style)
        if case .scalar(let t, let s) = value.content {
            #expect(t == text && s == style)
        }
    }

    @Test func tags() throws {
        let root = try root("a: !!str 1\nb: !custom x\nc: !!seq [1]\nd: ! y\n")
        #expect(root["a"]?.tag == "!!str")
        #expect(root["a"]?.scalar == "1")
        #expect(root["a"]?.start == Mark(line: 1, column: 4))
        #expect(root["b"]?.tag == "!custom")
        #expect(root["c"]?.tag == "!!seq")
        #expect(root["c"]?.sequence?.count == 1)
        #expect(root["d"]?.tag == "!")
        #expect(root.tag == nil)
    }

    @Test func cjkColumnsCountScalars() throws {
        let root = try root("名前: 值\n键: [甲, 乙]\n\"😀\": x\n")
        #expect(root["名前"]?.start == Mark(line: 1, column: 5))
        let list = try #require(root["键"]?.sequence)
        #expect(list.map(\.start) == [Mark(line: 2, column: 5), Mark(line: 2, column: 8)])
        #expect(root["😀"]?.start == Mark(line: 3, column: 6))
    }

    @Test func crlfLineEndings() throws {
        let root = try root("a: 1\r\nb:\r\n  - x\r\n")
        #expect(root["b"]?.sequence?.first?.start == Mark(line: 3, column: 5))
        #expect(root["b"]?.sequence?.first?.scalar == "x")
    }

    @Test func rootCanBeAnything() throws {
        #expect(try root("- a\n- b\n").sequence?.count == 2)
        #expect(try root("just text\n").scalar == "just text")
        let explicitEmpty = try root("---\n")
        #expect(explicitEmpty.isNull)
    }

    @Test func aliasBecomesNullPlaceholder() throws {
        let (document, diagnostics) = load("a: [1, *x, 3]\n")
        #expect(summary(diagnostics) == ["alias@1:8"])
        let items = try #require(document?.root?["a"]?.sequence)
        #expect(items.map(\.scalar) == ["1", "", "3"])
        #expect(items[1].isNull)
        #expect(items[1].start == Mark(line: 1, column: 8))
    }

    @Test func nodesRememberTheirFile() throws {
        let (document, _) = YAMLLoader.load(path: "rules/x.yaml", text: "a: [b]\n")
        let a = try #require(document?.root?["a"])
        #expect(a.file == "rules/x.yaml")
        #expect(a.sequence?.first?.location.description == "rules/x.yaml:1:5")
        #expect(document?.path == "rules/x.yaml")
    }
}
