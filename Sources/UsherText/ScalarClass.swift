internal import CUsherICU

/// What a scalar means for word boundaries.
struct ScalarClass {
    let bits: Int32

    /// A word character of a script written with spaces: a keyword may not end next to it.
    var continuesWord: Bool { bits & Int32(USHER_SCALAR_WORD) != 0 && !isUnspaced }
    /// A keyword that starts or ends with this character must do so at a word boundary.
    var needsBoundary: Bool { continuesWord }
    private var isUnspaced: Bool { bits & Int32(USHER_SCALAR_UNSPACED) != 0 }

    init(_ scalar: UInt32) {
        if scalar < 0x80 {
            let byte = UInt8(scalar)
            let isWord = (byte | 0x20) &- 0x61 < 26 || byte &- 0x30 < 10 || byte == 0x5F
            bits = isWord ? Int32(USHER_SCALAR_WORD) : 0
        } else {
            bits = usher_scalar_class(Int32(bitPattern: scalar))
        }
    }

    /// The class of the scalar starting at byte `index` of valid UTF-8.
    static func at(_ index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> ScalarClass {
        let lead = UInt32(bytes[index])
        if lead < 0x80 { return ScalarClass(lead) }
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        var scalar = lead & (0x7F >> UInt32(length))
        for offset in 1..<length where index + offset < bytes.count {
            scalar = scalar << 6 | UInt32(bytes[index + offset] & 0x3F)
        }
        return ScalarClass(scalar)
    }

    /// The class of the scalar that ends just before byte `index` of valid UTF-8.
    static func before(_ index: Int, in bytes: UnsafeBufferPointer<UInt8>) -> ScalarClass {
        var start = index - 1
        while start > 0 && bytes[start] & 0xC0 == 0x80 { start -= 1 }
        return at(start, in: bytes)
    }
}
