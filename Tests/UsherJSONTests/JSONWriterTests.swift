import Foundation
import Testing
import UsherJSON

@Suite("JSON writer")
struct JSONWriterTests {
    static let strings = ["", "plain", "say \"hi\"", "back\\slash", "a/b", "\u{0}\u{1F}\n\t\r\u{8}\u{C}\u{7F}", "🙂 退款"]

    @Test func theWriterWritesWhatFoundationReads() throws {
        let ints = [0, 7, -3, 10, 1_000_000, Int.max, Int.min]
        var w = JSONWriter(capacity: 0)
        w.byte(UInt8(ascii: "{"))
        w.key("ints", first: true)
        w.byte(UInt8(ascii: "["))
        for (i, v) in ints.enumerated() {
            if i > 0 { w.byte(UInt8(ascii: ",")) }
            w.int(v)
        }
        w.byte(UInt8(ascii: "]"))
        w.key("strings")
        w.stringArray(Self.strings)
        w.key("map")
        w.stringMap(["b": "2", "a": "1"])
        w.key("nothing")
        w.null()
        w.key("yes")
        w.bool(true)
        w.byte(UInt8(ascii: "}"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(w.bytes)) as? [String: Any])
        #expect((object["ints"] as? [NSNumber])?.map(\.int64Value) == ints.map(Int64.init))
        #expect(object["strings"] as? [String] == Self.strings)
        #expect(object["map"] as? [String: String] == ["a": "1", "b": "2"])
        #expect(object["nothing"] is NSNull && object["yes"] as? Bool == true)
        #expect(w.text.contains(#""map":{"a":"1","b":"2"}"#), "map keys sorted: equal maps, equal text")
    }

    @Test(arguments: strings)
    func stringsAreEscapedAsJSONEncoderDoes(_ s: String) throws {
        var w = JSONWriter()
        w.string(s)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        #expect(w.text == String(decoding: try encoder.encode(s), as: UTF8.self))
    }

    @Test(arguments: [(0.0, "0.0"), (-0.5, nil), (1.0, "1.0"), (1e-7, nil), (817_702_382.363_455_2, nil), (1e15, "1000000000000000.0"),
                      (1e300, nil), (-12345.0, "-12345.0")])
    func doublesReadBackExactly(_ v: Double, _ whole: String?) throws {
        var w = JSONWriter()
        w.double(v)
        // Whole numbers keep their ".0"; others are written as JSONEncoder writes them.
        let encoded = String(decoding: try JSONEncoder().encode(v), as: UTF8.self)
        #expect(w.text == (whole ?? encoded))
        var bytes = w.bytes
        #expect(try bytes.withUnsafeMutableBufferPointer { b in
            var r = JSONReader(UnsafeBufferPointer(b))
            return try r.double()
        } == v)
    }

    @Test func theReaderReadsWhatTheWriterWrites() throws {
        var w = JSONWriter()
        w.stringArray(Self.strings)
        w.reset()
        w.stringArray(Self.strings + ["\u{10FFFF}"])
        var bytes = w.bytes
        let back = try bytes.withUnsafeMutableBufferPointer { b in
            var r = JSONReader(UnsafeBufferPointer(b))
            return try r.stringArray()
        }
        #expect(back == Self.strings + ["\u{10FFFF}"])
    }
}
