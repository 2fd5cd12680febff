/// A quick "could this word be a form of a keyword?" test, so that the stemmer (≈ 250 ns a word)
/// runs only on the few words of a message that can matter.
///
/// Snowball stems are their word's start with an ending taken off, and at most the stem's last
/// letter changed ("happy" → "happi", "hoping" → "hope"): checked on all 64,000 lower-case words
/// of Debian's American English list, every word but "dying", "lying" and "tying" starts with its
/// stem less its last letter (the Spanish list's only exceptions were accents, which matching
/// folds). So a word can share a keyword's stem only if it starts with the first
/// `min(8, length − 1)` bytes of that stem. The filter keeps those starts as hashed bits: a word
/// passes when its first 1…8 bytes are a start of some stem; a false pass only costs a stemming.
struct PrefixFilter: Sendable {
    private static let bitCount = 1 << 19
    private var bits = [UInt64](repeating: 0, count: PrefixFilter.bitCount / 64)
    /// Which start lengths (1…8) some stem uses, as bits 1…8.
    private var lengths: UInt16 = 0

    /// Records the start of a stem (UTF-8 bytes).
    mutating func insert(stem: [UInt8]) {
        guard !stem.isEmpty else { return }
        var last = stem.count - 1
        while last > 0 && stem[last] & 0xC0 == 0x80 { last -= 1 }
        let length = min(8, last == 0 ? stem.count : last)
        lengths |= 1 << UInt16(length)
        let bit = stem.withUnsafeBufferPointer { Self.bit($0.baseAddress!, length) }
        bits[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    /// Whether the word at `start..<start + count` of `text` may share a stem with a keyword.
    @inline(__always)
    func mayMatch(_ text: UnsafeBufferPointer<UInt8>, start: Int, count: Int) -> Bool {
        let base = text.baseAddress! + start
        var length = 1
        while length <= min(8, count) {
            if lengths & (1 << UInt16(length)) != 0 {
                let bit = Self.bit(base, length)
                if bits[bit >> 6] & (1 << UInt64(bit & 63)) != 0 { return true }
            }
            length += 1
        }
        return false
    }

    @inline(__always)
    private static func bit(_ bytes: UnsafePointer<UInt8>, _ length: Int) -> Int {
        var key: UInt64 = 0
        for i in 0..<length { key = key << 8 | UInt64(bytes[i]) }
        key = (key &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(length)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: key >> 45)   // 19 bits
    }
}
