import Testing
import UsherText

@Suite struct PatternLintTests {
    @Test(arguments: [
        // Catastrophic shapes.
        (#"(a+)+$"#, true),
        (#"(a*)*b"#, true),
        (#"(\w+\s?)*$"#, true),
        (#"(?:\s*\w+)+x"#, true),
        (#"(\d{1,3},?)+"#, true),
        (#"((a+)b?)+"#, true),
        (#"(.+\.)+com"#, true),
        (#"(?:a|b+)*c"#, true),
        (#"(?i)(x+x+)+y"#, true),
        (#"(?=(a+)+b)"#, true),
        (#"(?x) ( a + ) + $"#, true),
        (#"^(a|aa)+b"#, true),
        (#"(?:\w|\d)+$"#, true),
        (#"(ab|a|b)*c"#, true),
        (#"(a|a{2})+"#, true),
        (#"(.*a){12}x"#, true),
        (#"(\d+,?){3}"#, true),
        // Safe shapes.
        (#"a+b+c*"#, false),
        (#"(ab)+"#, false),
        (#"(a|b)+"#, false),
        (#"(\d{3}-)+"#, false),
        (#"([a-z]+\.)+[a-z]+"#, false),
        (#"(\d+,)*\d+"#, false),
        (#"(,\d+)*"#, false),
        (#"([^.]+\.)+"#, false),
        (#"(\w+\s)*"#, false),
        (#"(a+)++"#, false),
        (#"(?>a+)+"#, false),
        (#"(a++)+"#, false),
        (#"(a+)?"#, false),
        (#"(a+){2}"#, false),
        (#"(ab|a)+"#, false),
        (#"(a|b|cd)+"#, false),
        (#"(a|aa){1,2}"#, false),
        (#"(?>a|aa)+"#, false),
        (#"(\w+\.){3}"#, false),
        (#"(\d{3}-){3}"#, false),
        (#"(a{1,3}){1,3}"#, false),
        (#"\(a+\)+"#, false),
        (#"[(a+)+]"#, false),
        (#"\Q(a+)+\E"#, false),
        (#"(?#a+ comment)x+"#, false),
        (#"(?<order>\b\d{3}-\d{7}-\d{7}\b)"#, false),
    ])
    func nestedQuantifier(source: String, expected: Bool) throws {
        #expect(try Pattern(source).hasNestedUnboundedQuantifier == expected)
    }

    @Test(arguments: [
        (#"(a+)+$"#, BacktrackingRisk.nestedRepeat),
        (#"^(a|aa)+b"#, .overlappingAlternatives),
        (#"(.*a){12}x"#, .repeatedUnboundedPart),
    ])
    func riskNamesTheShape(source: String, expected: BacktrackingRisk) throws {
        #expect(try Pattern(source).backtrackingRisk == expected)
    }

    @Test(arguments: [
        (#"refund"#, ["refund"]),
        (#"\bcharge\s?back\b"#, ["charge"]),
        (#"(?<order>\b\d{3}-\d{7}-\d{7}\b)"#, ["-"]),
        (#"refund|return"#, ["refund", "return"]),
        (#"(?:re)fund(?:ed)?"#, ["refund"]),
        (#"(refund|money back) now"#, ["refund", "money back"]),
        (#"(refund|money back) nowadays"#, [" nowadays"]),
                (#"order\s+(?:no|number)"#, ["order"]),
        (#"refunds?"#, ["refund"]),
        (#"ab+c"#, ["ab"]),
        (#"x{3}yz"#, ["xxxyz"]),
        (#"(?i)refund"#, ["refund"]),          // the prefilter compares ASCII letters caselessly
        (#"(?i)thanks"#, ["than"]),            // k and s also match U+212A and U+017F
        (#"(?i:café)|tea"#, ["caf", "tea"]),   // é: a caseless non-ASCII letter
        (#"(?i)é"#, nil),
        (#"café"#, ["café"]),
        (#"退款|退钱"#, ["退款", "退钱"]),
        (#"(?i)退款"#, ["退款"]),
        (#"\d+"#, nil),
        (#"refund|\d+"#, nil),
        (#"(?:refund)?"#, nil),
        (#"(?:refund)*x"#, ["x"]),
        (#"a.b"#, ["a"]),                      // both required; the first of the best is kept
        (#"\Qa.b\E"#, ["a.b"]),
        (#"\x41\x{263A}\."#, ["A☺."]),
        (#"(?=.*\brefund\b)(?=.*\border\b)"#, ["refund"]),
        (#"(?!refund)\w+"#, nil),
        (#"refund(*ACCEPT)x"#, nil),
        (#"(?x) re fund # comment"#, ["refund"]),
        (#"(a)\1"#, ["a"]),
        (#"[abc]def"#, ["def"]),
    ] as [(String, [String]?)])
    func requiredLiterals(source: String, expected: [String]?) throws {
        #expect(try Pattern(source).requiredLiterals == expected)
    }

    /// Whenever a pattern matches, one of its required literals occurs in the text.
    @Test func requiredLiteralsNeverMissAMatch() throws {
        let cases: [(String, [String])] = [
            (#"(?i)thanks"#, ["THANKS", "than\u{212A}s", "\u{212A}"]),
            (#"(?i)refund"#, ["ReFuNd"]),
            (#"(?i)(?:kelvin|k)"#, ["\u{212A}elvin"]),
            (#"ab+c"#, ["abbbbc"]),
            (#"(?=.*\brefund\b)(?=.*\border\b)"#, ["order then refund"]),
            (#"(refund|money back) nowadays"#, ["money back nowadays"]),
            (#"(?i:café)|tea"#, ["CAFÉ", "tea"]),
        ]
        var checked = 0
        for (source, texts) in cases {
            let pattern = try Pattern(source)
            for text in texts {
                guard case .match = pattern.match(text) else { continue }
                guard let literals = pattern.requiredLiterals else { continue }
                let hits = LiteralIndex(literals: literals).matches(in: text)
                #expect(!hits.isEmpty, "\(source) matched \(text) without any of \(literals)")
                checked += 1
            }
        }
        #expect(checked == 8)
    }
}

/// Random patterns from a small grammar against random texts: whenever a pattern matches, one of
/// its required literals occurs in the text, and the lint and parser never crash.
@Suite struct RequiredLiteralsPropertyTests {
    static let atoms = ["a", "b", "k", "S", "退", "é", ".", "\\d", "[ab]", "[^a]", "\\b", "^", "$", "\\w", "\\.", "x"]
    static let textAlphabet = ["a", "b", "k", "K", "s", "S", "\u{212A}", "\u{017F}", "退", "é", "É", " ", ".", "1", "x", "X"]

    static func pattern(_ depth: Int, _ generator: inout SeededGenerator) -> String {
        var items: [String] = []
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            var item: String
            switch Int.random(in: 0..<10, using: &generator) {
            case 0 where depth < 3:
                item = "(" + pattern(depth + 1, &generator) + "|" + pattern(depth + 1, &generator) + ")"
            case 1 where depth < 3:
                item = ["(?:", "(?i:", "(?=", "(?!", "(?>", "(?<n\(depth)>"].randomElement(using: &generator)!
                    + pattern(depth + 1, &generator) + ")"
            case 2:
                item = "(?i)"
            default:
                item = atoms.randomElement(using: &generator)!
            }
            if !item.hasPrefix("(?i)") && !["\\b", "^", "$"].contains(item) {
                item += ["", "", "", "?", "*", "+", "{2}", "{1,3}", "+?"].randomElement(using: &generator)!
            }
            items.append(item)
        }
        return items.joined()
    }

    @Test func requiredLiteralsAreSound() {
        var generator = SeededGenerator(seed: 2024)
        var compiled = 0
        var withLiterals = 0
        var matchedWithLiterals = 0
        for _ in 0..<3_000 {
            let source = Self.pattern(0, &generator)
            guard let pattern = try? Pattern(source) else { continue }
            compiled += 1
            _ = pattern.hasNestedUnboundedQuantifier
            guard let literals = pattern.requiredLiterals else { continue }
            withLiterals += 1
            let index = LiteralIndex(literals: literals)
            for _ in 0..<20 {
                let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                    Self.textAlphabet.randomElement(using: &generator)!
                }.joined()
                guard case .match = pattern.match(text) else { continue }
                matchedWithLiterals += 1
                #expect(!index.matches(in: text).isEmpty, "\(source) matched \(text.debugDescription) without any of \(literals)")
            }
        }
        #expect(compiled > 2_500)
        #expect(withLiterals > 1_000)
        #expect(matchedWithLiterals > 1_000)
    }
}
