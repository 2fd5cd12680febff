/// Finds the keyword words a message word may be a typo of, without comparing it with each:
/// symmetric deletion (as in SymSpell). Two words within `k` edits share a string made by
/// deleting at most `k` letters from each ("refund" and "refnud" both give "refnd"), so the index
/// keeps a hash of every such deletion of every keyword word, and a message word looks its own
/// deletions up — its length plus one look-ups for one edit, whatever the number of keywords.
/// A hit is a candidate only: `EditDistance` decides.
///
/// Hashes go through a bit set first (hashes of 2^22 bits, 512 KiB), so most look-ups are one
/// bit test; only a set bit reads the table.
struct TypoIndex: Sendable {

    private static let bitCount = 1 << 22
    private var bits = [UInt64](repeating: 0, count: TypoIndex.bitCount / 64)
    /// Hash → the phrases whose first word gives it.
    private var targets: [UInt64: [Int32]] = [:]
    /// The gate in front of the look-ups (`mayReach`), by length: the first two and the last two
    /// letters of every keyword word of 5, 6 or 9 letters and more (one edit cannot change both
    /// ends of a word of 5 letters or more), the first three and the last three of those of 7
    /// and 8 letters (nor both three-letter ends of one of 7 or more: fewer words share them),
    /// and for words allowing two edits, their fourth to sixth letters (two edits that change
    /// both ends leave them, moved by one place at most). Letters are bytes of ASCII; anything
    /// else counts as one letter "other". 64 lengths × 729 pairs × 2 ends, 64 × 19,683 triples,
    /// and the three-letter ends hashed into 2^21 bits.
    private var ends = [UInt64](repeating: 0, count: 64 * 729 * 2 / 64)
    private var middles = [UInt64](repeating: 0, count: 64 * 19_683 / 64)
    private var tripleEnds = [UInt64](repeating: 0, count: (1 << 21) / 64)
    private var hasPairs = false, hasTriples = false

    /// The most deletions a message word needs: 2 once a keyword word of 9 letters or more is in.
    private(set) var maxEdits = 0
    /// Message words of these lengths (in letters) can be within reach of a keyword word.
    private(set) var shortest = Int.max
    private(set) var longest = 0

    var isEmpty: Bool { targets.isEmpty }

    /// Indexes a keyword word (its letters) that may be misspelt by up to `edits` edits.
    mutating func insert(_ word: [UInt32], edits: Int, phrase: Int32) {
        guard edits > 0, word.count <= Self.longestWord else { return }
        maxEdits = max(maxEdits, edits)
        shortest = min(shortest, max(WordIndex.shortestTypo, word.count - edits))
        longest = max(longest, word.count + edits)
        let n = word.count
        let triples = edits == 1 && n >= 7
        hasTriples = hasTriples || triples
        hasPairs = hasPairs || !triples
        for length in max(0, n - edits)...min(63, n + edits) {
            if triples {
                Self.set(&tripleEnds, Self.tripleKey(length, 0, word[0], word[1], word[2]))
                Self.set(&tripleEnds, Self.tripleKey(length, 1, word[n - 3], word[n - 2], word[n - 1]))
                continue
            }
            Self.set(&ends, Self.endKey(length, 0, word[0], word[1]))
            Self.set(&ends, Self.endKey(length, 1, word[n - 2], word[n - 1]))
            if edits > 1 { Self.set(&middles, Self.middleKey(length, word[3], word[4], word[5])) }
        }
        for hash in word.withUnsafeBufferPointer({ Self.deletions($0, upTo: edits) }) {
            bits[Int(hash >> 42) >> 6] |= 1 << ((hash >> 42) & 63)
            if targets[hash]?.contains(phrase) != true { targets[hash, default: []].append(phrase) }
        }
    }

    /// Whether a word of this many letters can be within reach of a keyword word.
    func reaches(letters: Int) -> Bool { letters >= shortest && letters <= longest }

    /// The most edits a word of this many letters may be from a keyword word: two only from 7
    /// letters (a keyword word under 9 letters allows one).
    func edits(letters: Int) -> Int { letters >= 7 ? maxEdits : 1 }

    /// Whether a word (its letters) passes the gate: false means it is no typo of any keyword
    /// word, true that it may be.
    func mayReach<Letter: FixedWidthInteger>(_ word: UnsafeBufferPointer<Letter>) -> Bool {
        let n = word.count
        guard n >= shortest, n <= longest, n < 64 else { return false }
        if hasPairs, Self.test(ends, Self.endKey(n, 0, word[0], word[1])) || Self.test(ends, Self.endKey(n, 1, word[n - 2], word[n - 1])) {
            return true
        }
        if hasTriples, n >= 6, Self.test(tripleEnds, Self.tripleKey(n, 0, word[0], word[1], word[2]))
            || Self.test(tripleEnds, Self.tripleKey(n, 1, word[n - 3], word[n - 2], word[n - 1])) {
            return true
        }
        guard maxEdits > 1, n >= 7 else { return false }
        for offset in 2...4 where offset + 3 <= n {
            if Self.test(middles, Self.middleKey(n, word[offset], word[offset + 1], word[offset + 2])) { return true }
        }
        return false
    }

    @inline(__always)
    private static func letter<Letter: FixedWidthInteger>(_ l: Letter) -> Int {
        let v = UInt32(truncatingIfNeeded: l) &- 0x61
        return v < 26 ? Int(v) : 26
    }

    @inline(__always)
    private static func endKey<Letter: FixedWidthInteger>(_ length: Int, _ side: Int, _ a: Letter, _ b: Letter) -> Int {
        ((length * 2 + side) * 27 + letter(a)) * 27 + letter(b)
    }

    @inline(__always)
    private static func middleKey<Letter: FixedWidthInteger>(_ length: Int, _ a: Letter, _ b: Letter, _ c: Letter) -> Int {
        ((length * 27 + letter(a)) * 27 + letter(b)) * 27 + letter(c)
    }

    /// Hashed into 21 bits.
    @inline(__always)
    private static func tripleKey<Letter: FixedWidthInteger>(_ length: Int, _ side: Int, _ a: Letter, _ b: Letter, _ c: Letter) -> Int {
        let key = UInt64(((length * 2 + side) * 27 + letter(a)) * 729 + letter(b) * 27 + letter(c))
        return Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 43)
    }

    private static func set(_ bits: inout [UInt64], _ key: Int) { bits[key >> 6] |= 1 << UInt64(key & 63) }

    @inline(__always)
    private static func test(_ bits: [UInt64], _ key: Int) -> Bool { bits[key >> 6] & (1 << UInt64(key & 63)) != 0 }

    /// The phrases whose first word a word (its letters: bytes of ASCII, or Unicode scalars) may
    /// be a typo of, each once, in no set order.
    func candidates<Letter: FixedWidthInteger>(_ word: UnsafeBufferPointer<Letter>, into found: inout [Int32]) {
        guard mayReach(word) else { return }
        let n = word.count
        let edits = edits(letters: n)
        // n + 1 hashes for one edit, and n(n − 1)/2 more for two.
        let count = 1 + n + (edits > 1 ? n * (n - 1) / 2 : 0)
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count + 2 * (n + 1)) { scratch in
            let hashes = Self.deletions(word, upTo: edits, scratch: scratch)
            bits.withUnsafeBufferPointer { bits in
                for hash in hashes where bits[Int(hash >> 48)] & (1 << ((hash >> 42) & 63)) != 0 {
                    for t in targets[hash] ?? [] where !found.contains(t) { found.append(t) }
                }
            }
        }
    }

    // MARK: Hashes of deletions

    private static let base: UInt64 = 0x100_0000_01B3   // FNV's prime: odd, spreads bits
    /// No keyword word is longer; the scratch space stays small.
    private static let longestWord = 62

    /// The hashes of `word` and of every string made from it by deleting one letter, and two
    /// letters when `upTo` is 2 (repeats included), written to the start of `scratch` (at least
    /// 1 + n + n(n − 1)/2 + 2(n + 1) entries). A polynomial hash, so each deletion's hash comes
    /// from prefix hashes in constant time.
    @inline(__always)
    private static func deletions<Letter: FixedWidthInteger>(_ word: UnsafeBufferPointer<Letter>, upTo edits: Int,
                                                             scratch: UnsafeMutableBufferPointer<UInt64>) -> UnsafeBufferPointer<UInt64> {
        let n = word.count
        let out = scratch.baseAddress!
        let prefix = out + (1 + n + (edits > 1 ? n * (n - 1) / 2 : 0))   // prefix[i]: hash of word[0..<i]
        let power = prefix + (n + 1)                                     // power[i]: base^i
        prefix[0] = 0
        power[0] = 1
        for i in 0..<n {
            prefix[i + 1] = prefix[i] &* base &+ UInt64(truncatingIfNeeded: word[i])
            power[i + 1] = power[i] &* base
        }
        @inline(__always) func range(_ a: Int, _ b: Int) -> UInt64 { prefix[b] &- prefix[a] &* power[b - a] }
        var count = 0
        out[count] = finish(prefix[n], n); count += 1
        if edits >= 1 {
            for i in 0..<n {
                out[count] = finish(prefix[i] &* power[n - 1 - i] &+ range(i + 1, n), n - 1); count += 1
            }
        }
        if edits >= 2 && n >= 2 {
            for i in 0..<n {
                for j in (i + 1)..<n {
                    let h = prefix[i] &* power[n - 2 - i] &+ range(i + 1, j) &* power[n - 1 - j] &+ range(j + 1, n)
                    out[count] = finish(h, n - 2); count += 1
                }
            }
        }
        return UnsafeBufferPointer(start: out, count: count)
    }

    /// The same, into an array (building the index).
    private static func deletions(_ word: UnsafeBufferPointer<UInt32>, upTo edits: Int) -> [UInt64] {
        let n = word.count
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 1 + n + n * (n - 1) / 2 + 2 * (n + 1)) {
            Array(deletions(word, upTo: edits, scratch: $0))
        }
    }

    /// Mixes the length in and spreads the bits: one multiply, whose top bits (those the bit
    /// set reads) depend on every bit of the polynomial hash.
    @inline(__always)
    private static func finish(_ h: UInt64, _ length: Int) -> UInt64 {
        (h ^ UInt64(length) << 56) &* 0x9E37_79B9_7F4A_7C15
    }
}

/// Edit distance with adjacent transpositions counting as one edit (optimal string alignment):
/// "refund" → "refnud" is 1.
enum EditDistance {
    /// The distance between `a` and `b`, or `limit + 1` when it is more than `limit`.
    static func distance(_ a: UnsafeBufferPointer<UInt32>, _ b: UnsafeBufferPointer<UInt32>, limit: Int) -> Int {
        let n = a.count, m = b.count
        if abs(n - m) > limit { return limit + 1 }
        if n == 0 || m == 0 { return max(n, m) }
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 3 * (m + 1)) { rows in
            var previous2 = rows.baseAddress!
            var previous = previous2 + (m + 1)
            var current = previous + (m + 1)
            for j in 0...m { previous[j] = j }
            for i in 1...n {
                current[0] = i
                var best = i
                for j in 1...m {
                    let cost = a[i - 1] == b[j - 1] ? 0 : 1
                    var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                    if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                        d = min(d, previous2[j - 2] + 1)
                    }
                    current[j] = d
                    best = min(best, d)
                }
                if best > limit { return limit + 1 }
                (previous2, previous, current) = (previous, current, previous2)
            }
            return min(previous[m], limit + 1)
        }
    }

    static func distance(_ a: [UInt32], _ b: [UInt32], limit: Int) -> Int {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in distance(a, b, limit: limit) } }
    }
}
