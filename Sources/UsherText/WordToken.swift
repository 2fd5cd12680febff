/// One word of normalised text: a maximal run of word characters (letters, numbers, marks, the
/// underscore) of a script written with spaces between words. Chinese, Japanese and Thai text
/// makes no tokens: those scripts keep substring matching.
struct WordToken: Sendable, Equatable {
    /// Byte offsets into the text.
    var start: Int
    var end: Int
    /// Letters only: no digit and no underscore. Only such words match by form or typo
    /// (an order number or `refund_2` is matched as written).
    var isWord: Bool
    /// Every byte below 0x80.
    var isASCII: Bool

    var count: Int { end - start }

    /// The tokens of `text`, in order.
    static func scan(_ text: UnsafeBufferPointer<UInt8>, into tokens: inout [WordToken]) {
        withUnsafeTemporaryAllocation(of: WordToken.self, capacity: text.count / 2 + 1) { buffer in
            tokens.append(contentsOf: buffer[..<scan(text, into: buffer)])
        }
    }

    /// The tokens of `text`, in order, written to `tokens` (room for `text.count / 2 + 1`: a
    /// token and what ends it take two bytes at least); returns how many.
    static func scan(_ text: UnsafeBufferPointer<UInt8>, into tokens: UnsafeMutableBufferPointer<WordToken>) -> Int {
        guard let base = text.baseAddress else { return 0 }
        return asciiClass.withUnsafeBufferPointer { asciiClass in
            scan(base, text.count, asciiClass, into: tokens)
        }
    }

    private static func scan(_ base: UnsafePointer<UInt8>, _ count: Int, _ asciiClass: UnsafeBufferPointer<UInt8>,
                             into tokens: UnsafeMutableBufferPointer<WordToken>) -> Int {
        var written = 0
        var index = 0
        while index < count {
            // Between words: skip what cannot start one, ASCII a byte at a time.
            let byte = base[index]
            if byte < 0x80 {
                if asciiClass[Int(byte)] == 0 { index += 1; continue }
            } else if !Self.continuesWord(base, index, count) {
                index += Self.scalarLength(byte)
                continue
            }
            var token = WordToken(start: index, end: index, isWord: true, isASCII: true)
            while index < count {
                let b = base[index]
                if b < 0x80 {
                    let c = asciiClass[Int(b)]
                    if c == 0 { break }
                    if c == 2 { token.isWord = false }
                    index += 1
                } else {
                    guard Self.continuesWord(base, index, count) else { break }
                    token.isASCII = false
                    index += Self.scalarLength(b)
                }
            }
            token.end = min(index, count)
            tokens[written] = token
            written += 1
        }
        return written
    }

    /// Per ASCII byte: 0 not a word character, 1 a letter, 2 a digit or `_`.
    private static let asciiClass: [UInt8] = (0..<128).map { (b: UInt8) in
        (b | 0x20) &- 0x61 < 26 ? 1 : (b &- 0x30 < 10 || b == 0x5F) ? 2 : 0
    }

    /// Whether the non-ASCII scalar at `index` continues a word. U+4000…U+9FFF (CJK ideographs
    /// and Yijing symbols, lead bytes E4…E9) never does, and is most of Chinese text: answered
    /// without decoding; everything else asks ICU.
    @inline(__always)
    private static func continuesWord(_ base: UnsafePointer<UInt8>, _ index: Int, _ count: Int) -> Bool {
        let lead = base[index]
        if lead >= 0xE4 && lead <= 0xE9 { return false }
        return ScalarClass.at(index, in: UnsafeBufferPointer(start: base, count: count)).continuesWord
    }

    /// The tokens of a string (compile time: keywords).
    static func scan(_ bytes: [UInt8]) -> [WordToken] {
        var tokens: [WordToken] = []
        bytes.withUnsafeBufferPointer { scan($0, into: &tokens) }
        return tokens
    }


    @inline(__always)
    static func scalarLength(_ lead: UInt8) -> Int {
        lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
    }
}
