internal import CUsherICU

/// Normalised forms of one message, computed once per message and shared by every keyword rule.
///
/// Both forms are UTF-8 in Unicode NFKC with full case folding, invisible characters removed
/// (zero-width characters, soft hyphen, bidi controls, BOM and other default-ignorables, control
/// characters), every run of white space collapsed to one space, and no space at either end.
/// Pure-ASCII input takes a byte loop (tens of nanoseconds); anything else goes through ICU.
public struct NormalizedText: Sendable {
    /// The normalised text with accents kept.
    public let exact: [UInt8]
    /// The normalised text with accents folded (`é` → `e`, `ü` → `u`, `ł` → `l`). The same storage
    /// as `exact` when there was nothing to fold.
    public let folded: [UInt8]
    /// True when the input was longer than `maxBytes` and only its start was normalised.
    public let truncated: Bool
    /// True when `exact` (and so `folded`) is pure ASCII.
    public let isASCII: Bool

    /// Normalises `text`, cutting the input at `maxBytes` UTF-8 bytes (on a scalar boundary) first.
    public init(_ text: String, maxBytes: Int = 16_384) {
        (exact, folded, truncated, isASCII) = text.withUTF8Bytes { bytes in
            var length = min(bytes.count, max(maxBytes, 0))
            while length > 0 && length < bytes.count && bytes[length] & 0xC0 == 0x80 { length -= 1 }
            let input = UnsafeBufferPointer(rebasing: bytes[..<length])
            let truncated = length < bytes.count
            if input.isASCII {
                let exact = Self.normalizeASCII(input)
                return (exact, exact, truncated, true)
            }
            let (exact, folded) = Self.normalizeUnicode(input)
            return (exact, folded, truncated, exact.withUnsafeBufferPointer(\.isASCII))
        }
    }

    /// What ICU's path gives for ASCII, by hand: lower case, controls dropped, spaces collapsed.
    static func normalizeASCII(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        if let clean = lowercasedIfClean(input) { return clean }
        return [UInt8](unsafeUninitializedCapacity: input.count) { output, count in
            var written = 0
            var pendingSpace = false
            for byte in input {
                if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                    pendingSpace = written > 0
                    continue
                }
                if byte < 0x20 || byte == 0x7F { continue }
                if pendingSpace {
                    output[written] = 0x20
                    written += 1
                    pendingSpace = false
                }
                output[written] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                written += 1
            }
            count = written
        }
    }

    /// The common case, eight bytes at a time: ASCII text with no control characters and no white
    /// space but single spaces between words only needs lower-casing. Nil when the text is not
    /// like that.
    private static func lowercasedIfClean(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        guard count > 0 else { return [] }
        guard input[0] != 0x20, input[count - 1] != 0x20 else { return nil }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        // Each yields the high bit of every byte that qualifies; bytes are below 0x80, so no
        // addition carries into the next byte.
        func isSpace(_ word: UInt64) -> UInt64 { ~((word ^ (ones &* 0x20)) &+ ones &* 0x7F) & highs }
        func isControl(_ word: UInt64) -> UInt64 { (~(word &+ ones &* 0x60) | (word &+ ones)) & highs }
        func lowercased(_ word: UInt64) -> UInt64 {
            let upper = (word &+ ones &* 0x3F) & ~(word &+ ones &* 0x25) & highs  // 'A'...'Z'
            return word | upper >> 2
        }
        var clean = true
        let output = [UInt8](unsafeUninitializedCapacity: count) { output, initialized in
            let source = UnsafeRawPointer(input.baseAddress!)
            let target = UnsafeMutableRawPointer(output.baseAddress!)
            var index = 0
            while index + 9 <= count {
                let word = source.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let next = source.loadUnaligned(fromByteOffset: index + 1, as: UInt64.self)
                if isControl(word) | isSpace(word) & isSpace(next) != 0 {
                    clean = false
                    return
                }
                target.storeBytes(of: lowercased(word), toByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < count {
                let byte = input[index]
                if byte < 0x20 || byte == 0x7F || (byte == 0x20 && input[index + 1] == 0x20) {
                    clean = false
                    return
                }
                output[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
                index += 1
            }
            initialized = count
        }
        return clean ? output : nil
    }

    /// NFKC_Casefold and accent folding through ICU.
    static func normalizeUnicode(_ input: UnsafeBufferPointer<UInt8>) -> (exact: [UInt8], folded: [UInt8]) {
        // Three bytes out per byte in covers all but a few expanding compatibility characters;
        // for those ICU reports the sizes it needs and the second round uses them.
        var capacity = input.count * 3 + 16
        for _ in 0..<2 {
            var exactLength: Int32 = 0
            var foldedLength: Int32 = 0
            let result: (exact: [UInt8], folded: [UInt8])? = withUnsafeTemporaryAllocation(
                of: UInt8.self, capacity: capacity * 2
            ) { scratch in
                let exactOut = scratch.baseAddress!
                let foldedOut = exactOut + capacity
                let status = usher_normalize_utf8(
                    input.baseAddress, Int32(input.count),
                    exactOut, Int32(capacity), &exactLength,
                    foldedOut, Int32(capacity), &foldedLength)
                guard status == 0 else { return nil }
                let exact = Array(UnsafeBufferPointer(start: exactOut, count: Int(exactLength)))
                let folded = foldedLength < 0
                    ? exact : Array(UnsafeBufferPointer(start: foldedOut, count: Int(foldedLength)))
                return (exact, folded)
            }
            if let result { return result }
            if exactLength <= 0 && foldedLength <= 0 { break }  // an ICU failure, not a size
            capacity = Int(max(exactLength, foldedLength)) + 16
        }
        // ICU failed (out of memory): keep matching on a plain lower-cased copy.
        let fallback = Array(String(decoding: input, as: UTF8.self).lowercased().utf8)
        return (fallback, fallback)
    }
}
