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
        var written = 0
        var index = 0
        let count = text.count
        while index < count {
            let byte = text[index]
            if byte < 0x80 {
                if !Self.isASCIIWordByte(byte) { index += 1; continue }
            } else if !ScalarClass.at(index, in: text).continuesWord {
                index += Self.scalarLength(byte)
                continue
            }
            var token = WordToken(start: index, end: index, isWord: true, isASCII: true)
            while index < count {
                let b = text[index]
                if b < 0x80 {
                    guard Self.isASCIIWordByte(b) else { break }
                    if b &- 0x30 < 10 || b == 0x5F { token.isWord = false }
                    index += 1
                } else {
                    guard ScalarClass.at(index, in: text).continuesWord else { break }
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

    /// The tokens of a string (compile time: keywords).
    static func scan(_ bytes: [UInt8]) -> [WordToken] {
        var tokens: [WordToken] = []
        bytes.withUnsafeBufferPointer { scan($0, into: &tokens) }
        return tokens
    }

    /// A, B … Z, a … z, 0 … 9 and `_` (normalised text has no upper case, but keywords built by
    /// hand in tests may).
    @inline(__always)
    static func isASCIIWordByte(_ b: UInt8) -> Bool {
        (b | 0x20) &- 0x61 < 26 || b &- 0x30 < 10 || b == 0x5F
    }

    @inline(__always)
    static func scalarLength(_ lead: UInt8) -> Int {
        lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
    }
}
