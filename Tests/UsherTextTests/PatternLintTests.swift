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
