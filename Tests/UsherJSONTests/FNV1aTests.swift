import Testing
import UsherJSON

@Suite("FNV-1a")
struct FNV1aTests {
    /// Published test vectors (Fowler, Noll and Vo's reference implementation).
    @Test(arguments: [
        ("", 0xcbf2_9ce4_8422_2325 as UInt64, 0x811c_9dc5 as UInt32),
        ("a", 0xaf63_dc4c_8601_ec8c, 0xe40c_292c),
        ("foobar", 0x8594_4171_f739_67e8, 0xbf9c_f968),
    ])
    func knownValues(_ text: String, _ h64: UInt64, _ h32: UInt32) {
        #expect(FNV1a.hash(text) == h64)
        #expect(FNV1a.hash(Array(text.utf8)[...]) == h64)
        #expect(FNV1a.hash32(text) == h32)
    }

    @Test func addingInPiecesIsHashingTheWhole() {
        var h = FNV1a()
        h.add(Array("foo".utf8))
        h.add(UInt8(ascii: "b"))
        h.add("ar".utf8)
        #expect(h.value == FNV1a.hash("foobar"))
        #expect(FNV1a().value == FNV1a.hash(""))
    }
}
