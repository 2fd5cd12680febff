/// A quick "could this word be a form of a keyword?" test, so that the stemmer (≈ 250 ns a word)
/// runs only on the few words of a message that can matter.
///
/// Snowball stems are their word's start with an ending taken off, and at most the stem's last
/// letter changed ("happy" → "happi", "hoping" → "hope"): checked on all 64,000 lower-case words
/// of Debian's American English list, every word but "dying", "lying" and "tying" starts with its
/// stem less its last letter (the Spanish list's only exceptions were accents, which matching
/// folds). So a word can share a keyword's stem only if it starts with the first
/// `min(8, length − 1)` bytes of that stem. The filter keeps those starts — of one and two bytes
/// exactly, of three to eight as hashed bits behind a direct table of their first three or four
/// bytes — and a word passes when its first 1…8 bytes are a start of some stem; a false pass
/// only costs a stemming.
struct PrefixFilter: Sendable {
    private static let bitCount = 1 << 19
    private var bits = [UInt64](repeating: 0, count: PrefixFilter.bitCount / 64)
    /// Which start lengths (1…8) some stem uses, as bits 1…8.
    private var lengths: UInt16 = 0
    /// The starts of three bytes, and the first four bytes of the longer ones, by their bytes'
    /// low five bits (32,768 and 1,048,576 bits, no hashing): most words of a message fail here
    /// with one or two bit tests.
    private var firstThree = [UInt64](repeating: 0, count: (1 << 15) / 64)
    /// The starts of one and two bytes, exactly (256 and 65,536 bits).
    private var firstOne = [UInt64](repeating: 0, count: 256 / 64)
    private var firstTwo = [UInt64](repeating: 0, count: 65_536 / 64)
    private var firstFour = [UInt64](repeating: 0, count: (1 << 20) / 64)

    /// Records the start of a stem (UTF-8 bytes).
    mutating func insert(stem: [UInt8]) {
        guard !stem.isEmpty else { return }
        var last = stem.count - 1
        while last > 0 && stem[last] & 0xC0 == 0x80 { last -= 1 }
        let length = min(8, last == 0 ? stem.count : last)
        lengths |= 1 << UInt16(length)
        stem.withUnsafeBufferPointer { stem in
            let bit = Self.bit(stem.baseAddress!, length)
            bits[bit >> 6] |= 1 << UInt64(bit & 63)
            if length == 1 {
                firstOne[Int(stem[0]) >> 6] |= 1 << UInt64(stem[0] & 63)
            } else if length == 2 {
                let two = Int(stem[0]) << 8 | Int(stem[1])
                firstTwo[two >> 6] |= 1 << UInt64(two & 63)
            } else if length == 3 {
                let three = Self.three(stem.baseAddress!)
                firstThree[three >> 6] |= 1 << UInt64(three & 63)
            } else if length >= 4 {
                let four = Self.four(stem.baseAddress!)
                firstFour[four >> 6] |= 1 << UInt64(four & 63)
            }
        }
    }

    /// Whether the word at `start..<start + count` of `text` may share a stem with a keyword.
    @inline(__always)
    func mayMatch(_ text: UnsafeBufferPointer<UInt8>, start: Int, count: Int) -> Bool {
        let base = text.baseAddress! + start
        if lengths & 0b10 != 0 && firstOne[Int(base[0]) >> 6] & (1 << UInt64(base[0] & 63)) != 0 { return true }
        if count >= 2 && lengths & 0b100 != 0 {
            let two = Int(base[0]) << 8 | Int(base[1])
            if firstTwo[two >> 6] & (1 << UInt64(two & 63)) != 0 { return true }
        }
        // Three bytes and more: a direct table says whether the hashed bits need asking.
        var tried: UInt16 = 0
        if count >= 3 && lengths & 0b1000 != 0 {
            let three = Self.three(base)
            if firstThree[three >> 6] & (1 << UInt64(three & 63)) != 0 { tried |= 0b1000 }
        }
        if count >= 4 && lengths & 0b1_1111_0000 != 0 {
            let four = Self.four(base)
            if firstFour[four >> 6] & (1 << UInt64(four & 63)) != 0 { tried |= lengths & 0b1_1111_0000 }
        }
        var length = 3
        while length <= min(8, count) {
            if tried & (1 << UInt16(length)) != 0 {
                let bit = Self.bit(base, length)
                if bits[bit >> 6] & (1 << UInt64(bit & 63)) != 0 { return true }
            }
            length += 1
        }
        return false
    }

    @inline(__always)
    private static func three(_ bytes: UnsafePointer<UInt8>) -> Int {
        Int(bytes[0] & 31) << 10 | Int(bytes[1] & 31) << 5 | Int(bytes[2] & 31)
    }

    @inline(__always)
    private static func four(_ bytes: UnsafePointer<UInt8>) -> Int {
        three(bytes) << 5 | Int(bytes[3] & 31)
    }

    @inline(__always)
    private static func bit(_ bytes: UnsafePointer<UInt8>, _ length: Int) -> Int {
        var key: UInt64 = 0
        for i in 0..<length { key = key << 8 | UInt64(bytes[i]) }
        key = (key &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(length)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: key >> 45)   // 19 bits
    }
}
