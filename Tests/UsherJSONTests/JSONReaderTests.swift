import Testing
import UsherJSON

/// Runs `body` over the UTF-8 of `text`.
func reading<T>(_ text: String, _ body: (inout JSONReader) throws -> T) throws -> T {
    var bytes = Array(text.utf8)
    return try bytes.withUnsafeMutableBufferPointer { b in
        var r = JSONReader(UnsafeBufferPointer(b))
        return try body(&r)
    }
}

/// `text` parsed whole, as a tree.
func parse(_ text: String) throws(JSONError) -> JSONValue {
    var bytes = Array(text.utf8)
    return try bytes.withUnsafeMutableBufferPointer { b throws(JSONError) in try JSONReader.parse(UnsafeBufferPointer(b)) }
}

/// The error parsing `text` raises, as `offset: message`.
func failure(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
    do {
        let v = try parse(text)
        Issue.record("parsed: \(v.typeName)", sourceLocation: sourceLocation)
        return ""
    } catch {
        return "\(error.offset): \(error.message)"
    }
}

/// Compact text of a tree: `{a:[1,"x",null]}`, numbers as written.
func shape(_ v: JSONValue) -> String {
    switch v.kind {
    case let .object(members): "{" + members.map { "\($0.key):" + shape($0.value) }.joined(separator: ",") + "}"
    case let .array(items): "[" + items.map(shape).joined(separator: ",") + "]"
    case let .string(s): "\"" + s + "\""
    case let .number(n): n
    case let .bool(b): b ? "true" : "false"
    case .null: "null"
    }
}

@Suite("JSON reader")
struct JSONReaderTests {
    @Test(arguments: [
        ("", "0: the line has no JSON value"),
        ("  \t", "0: the line has no JSON value"),
        (#"{"a":1,}"#, "7: trailing comma before '}'"),
        ("[1,2,]", "5: trailing comma before ']'"),
        (#"{"a":1} x"#, "8: unexpected 'x' after the JSON value (one value per line)"),
        (#"{"a":"b"#, "5: unterminated string (missing closing '\"')"),
        (#"{'a':1}"#, "1: expected a key in double quotes, found '''"),
        (#"['a']"#, "1: strings need double quotes (\"…\"), not single quotes"),
        (#"{"a":"x\qy"}"#, #"7: invalid escape '\q' in a string (valid: \" \\ \/ \b \f \n \r \t \uXXXX)"#),
        (#"{"a":"\u12"}"#, #"6: '\u' needs four hex digits"#),
        (#"{"a":1,"a":2}"#, "7: duplicate key 'a'"),
        ("{\"a\":\"x\ty\"}", "7: a tab inside a string must be escaped (\\t, \\n, \\r or \\uXXXX)"),
        ("[\"\u{1F}\"]", "2: control character U+001F inside a string must be escaped (\\t, \\n, \\r or \\uXXXX)"),
        ("[012]", "1: numbers do not start with 0 (write \"…\" for ids with leading zeros)"),
        ("[-]", "2: a number needs digits after '-'"),
        ("[1.]", "3: a number needs digits after '.'"),
        ("[1e+]", "4: a number needs digits in its exponent"),
        ("{", "1: the line ends inside an object (missing '}')"),
        (#"{"a":1"#, "6: the line ends inside an object (missing '}')"),
        ("[1", "2: the line ends inside an array (missing ']')"),
        (#"{"a":"#, "5: the line ends in the middle of a JSON value"),
        (#"{"a" 1}"#, "5: expected ':' after the key 'a', found '1'"),
        (#"{"a":1 "b":2}"#, "7: expected ',' or '}' after a member, found '\"'"),
        ("[1 2]", "3: expected ',' or ']' after an array item, found '2'"),
        ("tru", "0: expected a JSON value, found 't'"),
        ("[nul]", "1: expected a JSON value, found 'n'"),
        ("é", "0: expected a JSON value, found a non-ASCII character"),
    ])
    func mistakesHaveAMessageAndAByteOffset(_ text: String, _ expected: String) {
        #expect(failure(text) == expected)
    }

    @Test func nestingIsLimitedInTreesAndMemberByMember() throws {
        let ok = String(repeating: "[", count: JSONReader.maxDepth) + String(repeating: "]", count: JSONReader.maxDepth)
        #expect(throws: Never.self) { try parse(ok) }
        let deep = "[" + ok + "]"
        #expect(failure(deep) == "64: nested more than 64 levels deep")
        #expect(throws: JSONError("nested more than 64 levels deep", at: 64)) {
            try reading(deep) { r in
                func walk(_ r: inout JSONReader) throws { try r.array { r in try walk(&r) } }
                try walk(&r)
            }
        }
    }

    @Test func treesKeepOrderNumbersAsWrittenAndOffsets() throws {
        let text = #" {"b": [1, -2.50, 3e+2, true, false, null], "a": {"x": ""}, "é": "ü"} "#
        let v = try parse(text)
        #expect(shape(v) == #"{b:[1,-2.50,3e+2,true,false,null],a:{x:""},é:"ü"}"#)
        #expect(v.offset == 1)
        #expect(v["b"]?.offset == 7)
        guard case let .array(items)? = v["b"]?.kind else { Issue.record("no array"); return }
        #expect(items.map(\.offset) == [8, 11, 18, 24, 30, 37])
        #expect(v["a"]?["x"]?.offset == 55)
        #expect(v["é"]?.offset == 66, "offsets count bytes, not characters")
        #expect(v["missing"] == nil && v["a"]?.typeName == "an object" && items[5].typeName == "null")
    }

    @Test(arguments: [
        (#""plain""#, "plain"),
        (#""a\"b\\c\/d\b\f\n\r\t""#, "a\"b\\c/d\u{8}\u{C}\n\r\t"),
        (#""\u00e9\u4E2D\ud83d\ude00""#, "é中😀"),
        (#""x\ud83dy""#, "x\u{FFFD}y"),            // a high surrogate alone
        (#""x\ude00y""#, "x\u{FFFD}y"),            // a low surrogate alone
        (#""\ud83d\u0041""#, "\u{FFFD}A"),         // a high surrogate before another escape
        (#""退款 🙂""#, "退款 🙂"),
    ])
    func stringsAndEscapes(_ text: String, _ expected: String) throws {
        #expect(try reading(text) { r in try r.string() } == expected)
        guard case let .string(s) = try parse(text).kind else { Issue.record("not a string"); return }
        #expect(s == expected)
    }

    @Test func invalidUTF8InAStringBecomesAReplacementCharacter() throws {
        var bytes: [UInt8] = [0x22, 0x61, 0xFF, 0x62, 0x22]
        let s = try bytes.withUnsafeMutableBufferPointer { b in
            var r = JSONReader(UnsafeBufferPointer(b))
            return try r.string()
        }
        #expect(s == "a\u{FFFD}b")
    }

    @Test func objectsByKeyIndexMatchEscapedKeysAndPassOnOthers() throws {
        let keys = JSONKeys(["name", "é", ""])
        var seen: [Int?] = []
        try reading(#"{"name":1, "\u00e9":2, "n\u0061me":3, "other":{"deep":[4]}, "":5}"#) { r in
            try r.object(keys: keys) { r, index in
                seen.append(index)
                if index == nil { _ = try r.value() } else { _ = try r.int() }
            }
            try r.end()
        }
        #expect(seen == [0, 1, 0, nil, 2])
    }

    @Test func integers() throws {
        #expect(try reading("[0, -0, 7, -42, 9223372036854775807, -9223372036854775808]") { r in
            var out: [Int] = []
            try r.array { r in out.append(try r.int()) }
            return out
        } == [0, 0, 7, -42, .max, .min])
        #expect(throws: JSONError("9223372036854775808 does not fit in 64 bits", at: 0)) { try reading("9223372036854775808") { try $0.int() } }
        #expect(throws: JSONError("-9223372036854775809 does not fit in 64 bits", at: 0)) { try reading("-9223372036854775809") { try $0.int() } }
        #expect(throws: JSONError("expected a whole number, found 1.5", at: 1)) { try reading(" 1.5") { try $0.int() } }
        #expect(throws: JSONError("expected a whole number, found 1e3", at: 0)) { try reading("1e3") { try $0.int() } }
        #expect(throws: JSONError("numbers do not start with 0 (write \"…\" for ids with leading zeros)", at: 0)) {
            try reading("01") { try $0.int() }
        }
        #expect(throws: JSONError("expected a whole number, found '\"'", at: 0)) { try reading(#""1""#) { try $0.int() } }
    }

    @Test func doubles() throws {
        #expect(try reading("[0, -0.5, 1e-07, 817702382.3634552, 1E+3, 12]") { r in
            var out: [Double] = []
            try r.array { r in out.append(try r.double()) }
            return out
        } == [0, -0.5, 1e-7, 817_702_382.363_455_2, 1000, 12])
        #expect(throws: JSONError("1e999 is too large for a 64-bit floating-point number", at: 0)) { try reading("1e999") { try $0.double() } }
        #expect(throws: JSONError("expected a number, found 'n'", at: 0)) { try reading("null") { try $0.double() } }
    }

    @Test func memberByMember() throws {
        let (map, list, nothing, something) = try reading(#" {"m": {"k": "v", "": "e"}, "l": ["x", "y"], "n": null, "s": "t"} "#) { r in
            var map: [String: String] = [:], list: [String] = [], nothing = false, something = false
            try r.object { r, key in
                switch key {
                case "m": map = try r.stringMap()
                case "l": list = try r.stringArray()
                case "n": nothing = try r.null()
                default: something = try r.null(); _ = try r.string()
                }
            }
            try r.end()
            return (map, list, nothing, something)
        }
        #expect(map == ["k": "v", "": "e"] && list == ["x", "y"] && nothing && !something)
        #expect(try reading(" [ ] ") { r in try r.stringArray() } == [])
        #expect(try reading("{}") { r in try r.stringMap() } == [:])
    }

    @Test func memberByMemberIsAsStrictAsTheTree() {
        #expect(throws: JSONError("trailing comma before '}'", at: 9)) { try reading(#"{"a":"b",}"#) { try $0.stringMap() } }
        #expect(throws: JSONError("trailing comma before ']'", at: 5)) { try reading(#"["a",]"#) { try $0.stringArray() } }
        #expect(throws: JSONError("expected a string, found '4'", at: 5)) { try reading(#"{"a":4}"#) { try $0.stringMap() } }
        #expect(throws: JSONError("expected an object, found '['", at: 0)) { try reading("[]") { try $0.stringMap() } }
        #expect(throws: JSONError("expected an array, found '{'", at: 0)) { try reading("{}") { try $0.stringArray() } }
        #expect(throws: JSONError("expected ':', found 'x'", at: 1)) { try reading(" x") { try $0.expect(UInt8(ascii: ":")) } }
        #expect(throws: JSONError("unexpected ',' after the JSON value (one value per line)", at: 3)) {
            try reading("[] ,") { r in _ = try r.stringArray(); try r.end() }
        }
    }

    @Test func offsetIsWhereReadingStopped() throws {
        try reading(#"  "ab" , 5"#) { r in
            #expect(r.offset == 0)
            _ = try r.string()
            #expect(r.offset == 6)
            #expect(try r.consume(UInt8(ascii: ",")))
            #expect(try !r.consume(UInt8(ascii: ",")))
            #expect(r.offset == 9, "white space before what is not consumed is skipped")
        }
    }
}
