import Foundation
import Synchronization

/// The correctly spelled words of one language, from a hunspell dictionary (a `.dic` file of
/// words with affix flags and an `.aff` file of prefix and suffix rules, as Debian's `hunspell-*`
/// packages install them under /usr/share/hunspell), so that a word the customer spelled right
/// never counts as a typo of a keyword: "cancer" is not "cancel".
///
/// A word is correct when it is a word of the `.dic` file, or one with a prefix, a suffix, two
/// suffixes (a suffix whose rule allows a further one: `-ción` then `-es`) or a prefix and a
/// suffix taken off according to the `.aff` rules. Compounding and the other hunspell features
/// are not read: a compound the dictionary does not list counts as misspelt, which at worst lets
/// it match a keyword one letter away. Comparison is on normalised text (lower case, NFKC), so
/// "Madrid" in the file is "madrid" here.
public final class SpellingDictionary: Sendable {
    /// One prefix or suffix rule.
    private struct Affix: Sendable {
        let flag: UInt32
        /// Taken from the word before the affix is added.
        let strip: [UInt8]
        /// What the rule adds (empty for `0`).
        let affix: [UInt8]
        /// Flags the affixed word carries: a suffix rule listed here may follow.
        let continuation: [UInt32]
        /// The condition on the word the rule applies to (at its end for suffixes, its start for
        /// prefixes), one entry per character.
        let condition: [Condition]
        /// A prefix and a suffix may both apply (`Y` in the rule's header).
        let crossProduct: Bool
    }

    /// One character of a condition: `.`, a letter, `[abc]` or `[^abc]`.
    private enum Condition: Sendable {
        case any
        case oneOf([UInt32], negated: Bool)

        func matches(_ scalar: UInt32) -> Bool {
            switch self {
            case .any: true
            case let .oneOf(set, negated): set.contains(scalar) != negated
            }
        }
    }

    /// Word → its flags.
    private let words: [[UInt8]: [UInt32]]
    /// Suffix rules by the last byte of what they add (256 lists), and those that add nothing.
    private let suffixesByLastByte: [[Affix]]
    private let emptySuffixes: [Affix]
    /// Prefix rules by the first byte of what they add; those that add nothing are not kept (a
    /// prefix of nothing only strips, which no dictionary here uses).
    private let prefixesByFirstByte: [[Affix]]
    /// Words with one of these flags are not words on their own.
    private let notAlone: Set<UInt32>
    /// The language, as the files were asked for.
    public let language: String
    /// Hashes of the words and their forms with one suffix of a small rule (plurals, -ed, -ing;
    /// not the hundreds of forms of a Spanish verb): a quick yes for most words a customer
    /// writes, so that they skip the typo search (`surelyKnows`).
    private let common: HashSet64

    /// Reads a dictionary from the texts of its `.dic` and `.aff` files (UTF-8).
    public init(language: String, dic: String, aff: String) {
        self.language = language
        var flagType = "char"
        var suffixes: [Affix] = []
        var prefixes: [Affix] = []
        var notAlone = Set<UInt32>()
        var headers: [String: Bool] = [:]   // "SFX A" → cross product
        var pending: [(kind: String, fields: [Substring])] = []
        for line in aff.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            switch first {
            case "FLAG":
                if fields.count > 1 { flagType = String(fields[1]) }
            case "NEEDAFFIX", "ONLYINCOMPOUND", "FORBIDDENWORD":
                if fields.count > 1 { pending.append((String(first), fields)) }
            case "SFX", "PFX":
                guard fields.count >= 4 else { continue }
                let key = "\(first) \(fields[1])"
                if headers[key] == nil, fields.count == 4, Int(fields[3]) != nil {
                    headers[key] = fields[2] == "Y"
                } else if fields.count >= 5 {
                    pending.append((String(first), fields))
                }
            default: continue
            }
        }
        func flags(_ text: Substring) -> [UInt32] { Self.flags(text, type: flagType) }
        for (kind, fields) in pending {
            switch kind {
            case "SFX", "PFX":
                guard let flag = flags(fields[1]).first else { continue }
                let strip = fields[2] == "0" ? [] : Self.normalize(fields[2])
                let affixField = fields[3].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
                let affix = affixField[0] == "0" ? [] : Self.normalize(affixField[0])
                let continuation = affixField.count > 1 ? flags(affixField[1]) : []
                let affixRule = Affix(flag: flag, strip: strip, affix: affix, continuation: continuation,
                                      condition: Self.condition(fields[4]),
                                      crossProduct: headers["\(kind) \(fields[1])"] ?? false)
                if kind == "SFX" { suffixes.append(affixRule) } else { prefixes.append(affixRule) }
            default:
                if let flag = flags(fields[1]).first { notAlone.insert(flag) }
            }
        }
        var words: [[UInt8]: [UInt32]] = [:]
        var lines = dic.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)[...]
        if let first = lines.first, Int(first.trimmingCharacters(in: .whitespaces)) != nil { lines = lines.dropFirst() }
        words.reserveCapacity(lines.count)
        for line in lines {
            guard let entry = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first else { continue }
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let word = Self.normalize(parts[0])
            guard !word.isEmpty else { continue }
            let wordFlags = parts.count > 1 ? flags(parts[1]) : []
            words[word, default: []].append(contentsOf: wordFlags)
            // A word listed once with flags that forbid it alone and once without is a word.
            if wordFlags.allSatisfy({ !notAlone.contains($0) }) { words[word]!.append(Self.standsAlone) }
        }
        self.words = words
        var common = HashSet64(capacity: words.count * 3)
        let smallGroups = Dictionary(grouping: suffixes, by: \.flag).filter { $0.value.count <= 40 }
        for (word, flags) in words {
            if flags.contains(Self.standsAlone) { common.insert(word) }
            for flag in flags {
                for s in smallGroups[flag] ?? [] where word.ends(with: s.strip) && Self.holds(s.condition, atEndOf: word) {
                    common.insert(Array(word[..<(word.count - s.strip.count)]) + s.affix)
                }
            }
        }
        self.common = common
        var byLast = [[Affix]](repeating: [], count: 256)
        for s in suffixes where !s.affix.isEmpty { byLast[Int(s.affix[s.affix.count - 1])].append(s) }
        suffixesByLastByte = byLast
        emptySuffixes = suffixes.filter(\.affix.isEmpty)
        var byFirst = [[Affix]](repeating: [], count: 256)
        for p in prefixes where !p.affix.isEmpty { byFirst[Int(p.affix[0])].append(p) }
        prefixesByFirstByte = byFirst
        self.notAlone = notAlone
    }

    /// A flag no file uses, given to words that may stand alone.
    private static let standsAlone: UInt32 = .max

    /// True only for a word spelled right, in a few nanoseconds; false says nothing (ask
    /// `contains`). Most words of a message answer true.
    func surelyKnows(_ word: UnsafeBufferPointer<UInt8>) -> Bool {
        common.contains(word)
    }

    /// Whether `word` (normalised: lower case, NFKC; UTF-8) is spelled right.
    public func contains(_ word: [UInt8]) -> Bool {
        if words[word]?.contains(Self.standsAlone) == true { return true }
        guard let first = word.first else { return false }
        if hasSuffix(word, needing: nil, depth: 0) { return true }
        for p in prefixesByFirstByte[Int(first)] where p.affix.count < word.count && word.starts(with: p.affix) {
            let stem = p.strip + word[p.affix.count...]
            guard Self.holds(p.condition, atStartOf: stem) else { continue }
            if words[stem]?.contains(p.flag) == true { return true }
            if p.crossProduct && hasSuffix(stem, needing: p.flag, depth: 0) { return true }
        }
        return false
    }

    /// Whether `word` with an apostrophe put back somewhere is spelled right: "arent", "dont",
    /// "youre", "cest" are "aren't", "don't", "you're", "c'est" typed without one.
    public func containsWithApostrophe(_ word: [UInt8]) -> Bool {
        guard word.count >= 2 else { return false }
        for i in 1..<word.count where word[i] & 0xC0 != 0x80 {
            if contains(Array(word[..<i]) + [0x27] + word[i...]) { return true }
        }
        return false
    }

    /// Whether `word` is a dictionary word plus a suffix (or two). `needing`: the root must also
    /// carry this prefix flag, and the suffix allow a prefix. `depth` 1: looking for the inner of
    /// two suffixes, whose rule must list `outer` as a continuation.
    private func hasSuffix(_ word: [UInt8], needing prefix: UInt32?, depth: Int, outer: UInt32? = nil) -> Bool {
        guard let last = word.last else { return false }
        for s in suffixesByLastByte[Int(last)] + emptySuffixes where s.affix.count < word.count && word.ends(with: s.affix) {
            if let outer, !s.continuation.contains(outer) { continue }
            if prefix != nil && !s.crossProduct { continue }
            let stem = Array(word[..<(word.count - s.affix.count)]) + s.strip
            guard Self.holds(s.condition, atEndOf: stem) else { continue }
            if let flags = words[stem], flags.contains(s.flag), prefix.map(flags.contains) ?? true { return true }
            if depth == 0 && prefix == nil && hasSuffix(stem, needing: nil, depth: 1, outer: s.flag) { return true }
        }
        return false
    }

    // MARK: Reading the files

    private static func normalize(_ s: Substring) -> [UInt8] {
        NormalizedText(String(s), maxBytes: .max).exact
    }

    /// The flags of a flag field, by the file's `FLAG` type.
    private static func flags(_ text: Substring, type: String) -> [UInt32] {
        switch type {
        case "long":
            let scalars = Array(text.unicodeScalars)
            return stride(from: 0, to: scalars.count - 1, by: 2).map { scalars[$0].value << 16 | scalars[$0 + 1].value }
        case "num":
            return text.split(separator: ",").compactMap { UInt32($0) }
        default:   // "char" (bytes) and "UTF-8" (characters) read the same from a Swift string
            return text.unicodeScalars.map(\.value)
        }
    }

    private static func condition(_ text: Substring) -> [Condition] {
        if text == "." { return [] }
        var out: [Condition] = []
        var scalars = Array(text.unicodeScalars)[...]
        while let c = scalars.first {
            scalars = scalars.dropFirst()
            if c == "[" {
                let negated = scalars.first == "^"
                if negated { scalars = scalars.dropFirst() }
                var set: [UInt32] = []
                while let m = scalars.first, m != "]" {
                    set.append(contentsOf: normalize(Substring(String(m))).decodedScalars)
                    scalars = scalars.dropFirst()
                }
                scalars = scalars.dropFirst()
                out.append(.oneOf(set, negated: negated))
            } else if c == "." {
                out.append(.any)
            } else {
                out.append(.oneOf(normalize(Substring(String(c))).decodedScalars, negated: false))
            }
        }
        return out
    }

    private static func holds(_ condition: [Condition], atEndOf word: [UInt8]) -> Bool {
        if condition.isEmpty { return true }
        let scalars = word.decodedScalars
        guard scalars.count >= condition.count else { return false }
        return zip(condition, scalars.suffix(condition.count)).allSatisfy { $0.matches($1) }
    }

    private static func holds(_ condition: [Condition], atStartOf word: [UInt8]) -> Bool {
        if condition.isEmpty { return true }
        let scalars = word.decodedScalars
        guard scalars.count >= condition.count else { return false }
        return zip(condition, scalars.prefix(condition.count)).allSatisfy { $0.matches($1) }
    }

    // MARK: The system's dictionaries

    /// Where Debian's `hunspell-*` packages put their files.
    public static let systemFolder = "/usr/share/hunspell"

    /// The region whose dictionary stands for a language when several are installed.
    private static let preferredRegion: [String: String] = [
        "en": "US", "es": "ES", "pt": "PT", "de": "DE", "fr": "FR", "it": "IT", "nl": "NL", "sv": "SE",
        "da": "DK", "nb": "NO", "ru": "RU", "pl": "PL", "cs": "CZ", "el": "GR", "ca": "ES", "ro": "RO",
    ]

    /// The `.dic` file for a language in `folder`: `en` → `en_US.dic`; the language alone
    /// (`xx.dic`), then its preferred region, then the first other region. Nil when none is there.
    public static func file(for language: String, in folder: String = systemFolder) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let candidates = [language + ".dic"] + (preferredRegion[language].map { ["\(language)_\($0).dic"] } ?? [])
            + names.filter { $0.hasPrefix(language + "_") && $0.hasSuffix(".dic") }.sorted()
        return candidates.first { names.contains($0) && names.contains(String($0.dropLast(4)) + ".aff") }
            .map { folder + "/" + $0 }
    }

    private static let loaded = Mutex<[String: SpellingDictionary]>([:])

    /// The system's dictionary for a language, read once per process and shared by every bot.
    /// Throws a message naming what to install when there is none.
    public static func system(_ language: String, folder: String = systemFolder) throws(SpellingDictionaryError) -> SpellingDictionary {
        let key = folder + "/" + language
        if let d = loaded.withLock({ $0[key] }) { return d }
        guard let dicPath = file(for: language, in: folder) else {
            throw SpellingDictionaryError(message: "no hunspell dictionary for '\(language)' in \(folder); install one (Debian: apt-get install hunspell-\(language == "en" ? "en-us" : language))")
        }
        let affPath = String(dicPath.dropLast(4)) + ".aff"
        guard let dic = try? String(contentsOfFile: dicPath, encoding: .utf8),
              let aff = try? String(contentsOfFile: affPath, encoding: .utf8) else {
            throw SpellingDictionaryError(message: "cannot read the hunspell dictionary \(dicPath) as UTF-8")
        }
        let dictionary = SpellingDictionary(language: language, dic: dic, aff: aff)
        return loaded.withLock { cache in
            if let other = cache[key] { return other }   // another thread read it meanwhile
            cache[key] = dictionary
            return dictionary
        }
    }
}

/// Why a language's dictionary could not be read.
public struct SpellingDictionaryError: Error, Sendable {
    public let message: String
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        suffix.count <= count && self[(count - suffix.count)...].elementsEqual(suffix)
    }

    /// The Unicode scalars of valid UTF-8.
    var decodedScalars: [UInt32] {
        String(decoding: self, as: UTF8.self).unicodeScalars.map(\.value)
    }
}

/// A set of byte strings kept as 64-bit hashes (open addressing): no strings stored, and a
/// collision (one in 2^64 / n) could only call a misspelt word known.
struct HashSet64: Sendable {
    private var slots: [UInt64]
    private let mask: Int

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [UInt64](repeating: 0, count: size)
        mask = size - 1
    }

    mutating func insert(_ bytes: [UInt8]) {
        let h = bytes.withUnsafeBufferPointer(Self.hash)
        var i = Int(truncatingIfNeeded: h) & mask
        while slots[i] != 0 {
            if slots[i] == h { return }
            i = (i + 1) & mask
        }
        slots[i] = h
    }

    func contains(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let h = Self.hash(bytes)
        var i = Int(truncatingIfNeeded: h) & mask
        while slots[i] != 0 {
            if slots[i] == h { return true }
            i = (i + 1) & mask
        }
        return false
    }

    /// FNV-1a, finished with a multiply so that the low bits (the slot) depend on every byte;
    /// never 0 (an empty slot).
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
        h = (h ^ (h >> 29)) &* 0xBF58_476D_1CE4_E5B9
        h ^= h >> 32
        return h == 0 ? 1 : h
    }
}
