import Testing
import UsherTestSupport
@testable import UsherText

@Suite struct PatternTests {
    @Test func namedCaptures() throws {
        let pattern = try Pattern(#"(?<order>\b\d{3}-\d{7}-\d{7}\b)(?:\s+(?<note>\w+))?"#)
        #expect(pattern.captureNames == ["order", "note"])
        #expect(pattern.isJIT)
        #expect(pattern.match("order 123-1234567-1234567 please") ==
                .match(captures: ["order": "123-1234567-1234567", "note": "please"]))
        #expect(pattern.match("order 123-1234567-1234567") == .match(captures: ["order": "123-1234567-1234567"]))
        #expect(pattern.match("order 123-123") == .noMatch)
    }

    @Test func capturesUseUTF8OffsetsCorrectly() throws {
        let pattern = try Pattern(#"订单(?<order>\d+)号(?<rest>.*)$"#)
        #expect(pattern.match("我的订单12345号，谢谢 🙏") == .match(captures: ["order": "12345", "rest": "，谢谢 🙏"]))
        let word = try Pattern(#"(?<word>\w+)$"#)  // UCP: \w includes letters of every script
        #expect(word.match("名前は Ünïcödé") == .match(captures: ["word": "Ünïcödé"]))
    }

    @Test func duplicateNamesTakeTheGroupThatMatched() throws {
        let pattern = try Pattern(#"(?J)(?:id (?<n>\d+)|no (?<n>\w+))"#)
        #expect(pattern.captureNames == ["n"])
        #expect(pattern.match("no abc") == .match(captures: ["n": "abc"]))
        #expect(pattern.match("id 42") == .match(captures: ["n": "42"]))
    }

    @Test func utf8BufferEntryPoint() throws {
        let pattern = try Pattern(#"(?<x>é+)"#)
        let valid = Array("caféé".utf8)
        #expect(valid.withUnsafeBufferPointer { pattern.match(utf8: $0) } == .match(captures: ["x": "éé"]))
        let invalid: [UInt8] = [0x63, 0xC3, 0x28, 0xFF]
        #expect(invalid.withUnsafeBufferPointer { pattern.match(utf8: $0) } == .noMatch)
        #expect([UInt8]().withUnsafeBufferPointer { pattern.match(utf8: $0) } == .noMatch)
    }

    @Test(arguments: [
        (#"(?<order>\d+"#, "missing closing parenthesis", 12),
        (#"退款(?<order>\d+"#, "missing closing parenthesis", 14),
        (#"退款[a-"#, "missing terminating ] for character class", 5),
        (#"ab)"#, "unmatched closing parenthesis", 2),
        (#"转人工\"#, #"\ at end of pattern"#, 4),
        (#"x{2,1}"#, "numbers out of order in {} quantifier", 5),
        (#"(?<n>a)(?<n>b)"#, "two named subpatterns have the same name (PCRE2_DUPNAMES not set)", 12),
        (#"a\C"#, #"using \C is disabled by the application"#, 3),
    ])
    func compileErrorsPointAtScalars(source: String, message: String, offset: Int) {
        #expect(throws: PatternError(message: message, offset: offset)) { try Pattern(source) }
    }

    @Test(arguments: [
        ("", true), ("a*", true), ("^$", true), ("(?:refund)?", true), ("x|", true), (#"\b"#, false),
        ("refund", false), ("a+", false), (#"(?=.*refund)"#, false), ("^", true),
    ])
    func matchesEmpty(source: String, expected: Bool) throws {
        #expect(try Pattern(source).matchesEmpty == expected)
    }

    @Test func catastrophicPatternHitsTheLimitQuickly() throws {
        let pattern = try Pattern("(a+)+$")
        let text = String(repeating: "a", count: 10_000) + "b"
        var result = PatternMatch.noMatch
        let elapsed = cpuTime { result = pattern.match(text) }
        #expect(result == .limitHit("match limit"))
        #expect(elapsed > .zero && elapsed < .milliseconds(100), "\(elapsed) of CPU time")
    }

    @Test func theInterpreterHitsItsLimitsToo() throws {
        // (*NO_JIT) forces the interpreter, where depth and heap limits apply.
        let text = String(repeating: "a", count: 10_000) + "b"
        let catastrophic = try Pattern("(*NO_JIT)(a+)+$")
        #expect(!catastrophic.isJIT || catastrophic.match(text) != .noMatch)
        #expect(catastrophic.match(text) == .limitHit("match limit"))
        // Every iteration of a group with alternatives keeps a backtracking frame.
        let long = String(repeating: "ab", count: 5_000) + "c"
        let deep = try Pattern("(*NO_JIT)^(?:(a)|b)*c", limits: PatternLimits(matchLimit: 10_000_000, depthLimit: 500, heapLimitKiB: 100_000))
        #expect(deep.match(long) == .limitHit("depth limit"))
        let heavy = try Pattern("(*NO_JIT)^(?:(a)|b)*c", limits: PatternLimits(matchLimit: 10_000_000, depthLimit: 10_000_000, heapLimitKiB: 100))
        #expect(heavy.match(long) == .limitHit("heap limit"))
        #expect(try Pattern("(*NO_JIT)^(?:(a)|b)*c").match(long) == .match(captures: [:]))
    }

    @Test func deepJITRecursionFallsBackInsteadOfCrashing() throws {
        // Each iteration of a capturing group with alternatives keeps a backtracking frame; on
        // a long subject that overflows the fixed 32 KiB JIT stack.
        let pattern = try Pattern("^(?:(a)|(b))*$")
        #expect(pattern.isJIT)
        let text = String(repeating: "ab", count: 8_000)
        #expect(pattern.match(text) == .match(captures: [:]))
        let nested = try Pattern(String(repeating: "(", count: 200) + "a" + String(repeating: ")*", count: 200))
        #expect(nested.match(String(repeating: "a", count: 16_000)) != .noMatch)
    }

    @Test func longMessagesAreBoundedInTime() throws {
        // Just under the match limit at every start position: PCRE2's own limits never trigger.
        let pattern = try Pattern("(a|aa){1,14}$", limits: PatternLimits(
            matchLimit: 1_000_000, depthLimit: 100_000, heapLimitKiB: 20_480, timeLimit: .milliseconds(20)))
        let text = String(repeating: "a", count: 16_000) + "!"
        var result = PatternMatch.noMatch
        let elapsed = cpuTime { result = pattern.match(text) }
        #expect(result == .limitHit("time limit"))
        #expect(elapsed < .seconds(1))
    }

    @Test func longMessagesMatchTheSameWay() throws {
        let padding = String(repeating: "x ", count: 400)
        let cases: [(String, String, PatternMatch)] = [
            (#"(?<order>\d{3}-\d{7})"#, padding + "order 123-1234567", .match(captures: ["order": "123-1234567"])),
            (#"^(?<first>\w+)"#, "hello " + padding, .match(captures: ["first": "hello"])),
            (#"(*UTF)(*LIMIT_MATCH=50)(a+)+$"#, String(repeating: "a", count: 300) + "b", .limitHit("match limit")),
            (#"(*NO_JIT)refund|(?<n>\d+)$"#, padding + "42", .match(captures: ["n": "42"])),
            (#"(?i)(?:stop|cancel)\b"#, padding + "CANCEL", .match(captures: [:])),
            (#"refund"#, padding, .noMatch),
        ]
        for (source, text, expected) in cases {
            #expect(text.utf8.count > Pattern.guardedLength)
            let pattern = try Pattern(source)
            #expect(pattern.match(text) == expected, "\(source)")
            #expect(Array(text.utf8).withUnsafeBufferPointer { pattern.match(utf8: $0) } == expected, "\(source)")
        }
    }

    @Test func limitsAreExposed() throws {
        let limits = PatternLimits(matchLimit: 5, depthLimit: 6, heapLimitKiB: 7)
        #expect(try Pattern("x", limits: limits).limits == limits)
        #expect(try Pattern("x").limits == .default)
        #expect(try Pattern("(a+)+$", limits: limits).match("aaaaaaab") == .limitHit("match limit"))
    }

    @Test func concurrentMatchesShareOnePattern() async throws {
        let pattern = try Pattern(#"(?<n>\d+)"#)
        let results = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<64 {
                group.addTask {
                    (0..<200).allSatisfy { j in pattern.match("id \(i * 1000 + j) ok") == .match(captures: ["n": "\(i * 1000 + j)"]) }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0 })
    }
}
