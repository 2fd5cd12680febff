import Synchronization

/// What the stemmers and dictionaries said about the words customers write, remembered: a
/// Snowball stem costs about 250 ns and a dictionary look-up with affix rules more, while
/// customers keep writing the same few thousand words. Shared by every decision of a rule set
/// (a `Mutex`: the lock is held for a look-up, never while stemming), and bounded: once it holds
/// `capacity` answers it stops learning new ones, so a flood of made-up words cannot grow it.
final class WordFacts: Sendable {
    /// What a key stands for: a word's stem in the language numbered `language`, or whether the
    /// word is spelled right (`language` −1).
    private struct Entry: Sendable {
        let word: [UInt8]
        let language: Int
        let stem: [UInt8]
        let spelled: Bool
    }

    /// Open addressing over the keys (a hash already: no second hashing, as a `Dictionary`
    /// would do), at most half full: it doubles as it learns.
    private struct Table: Sendable {
        var keys: [UInt64]
        var entries: [Entry?]
        var count = 0
        var mask: Int

        init(size: Int) {
            keys = [UInt64](repeating: 0, count: size)
            entries = [Entry?](repeating: nil, count: size)
            mask = size - 1
        }

        mutating func insert(_ key: UInt64, _ entry: Entry) {
            if (count + 1) * 2 > keys.count {
                var bigger = Table(size: keys.count * 2)
                for (k, e) in zip(keys, entries) where k != 0 { bigger.insert(k, e!) }
                self = bigger
            }
            let i = slot(key)
            guard keys[i] == 0 else { return }
            keys[i] = key
            entries[i] = entry
            count += 1
        }

        /// The slot of `key`, or of the empty slot where it would go.
        func slot(_ key: UInt64) -> Int {
            var i = Int(truncatingIfNeeded: key) & mask
            while keys[i] != 0 && keys[i] != key { i = (i + 1) & mask }
            return i
        }
    }

    private let entries: Mutex<Table>
    private let capacity: Int

    init(capacity: Int = 100_000) {
        self.capacity = capacity
        entries = Mutex(Table(size: 64))
    }

    /// Never 0 (an empty slot).
    private static func key(_ word: UnsafeBufferPointer<UInt8>, _ language: Int) -> UInt64 {
        let k = HashSet64.hash(word) &+ UInt64(bitPattern: Int64(language + 1)) &* 0x9E37_79B9_7F4A_7C15
        return k == 0 ? 1 : k
    }

    /// The stem of `word` in language `language`, if known.
    func stem(_ word: UnsafeBufferPointer<UInt8>, language: Int) -> [UInt8]? {
        let key = Self.key(word, language)
        return entries.withLock { table in
            guard let e = table.entries[table.slot(key)], e.language == language, e.word.elementsEqual(word) else { return nil }
            return e.stem
        }
    }

    /// Whether `word` is spelled right, if known.
    func spelled(_ word: UnsafeBufferPointer<UInt8>) -> Bool? {
        let key = Self.key(word, -1)
        return entries.withLock { table in
            guard let e = table.entries[table.slot(key)], e.language == -1, e.word.elementsEqual(word) else { return nil }
            return e.spelled
        }
    }

    func learn(_ word: UnsafeBufferPointer<UInt8>, language: Int, stem: [UInt8]) {
        remember(Self.key(word, language), Entry(word: Array(word), language: language, stem: stem, spelled: false))
    }

    func learn(_ word: UnsafeBufferPointer<UInt8>, spelled: Bool) {
        remember(Self.key(word, -1), Entry(word: Array(word), language: -1, stem: [], spelled: spelled))
    }

    /// A key shared by two words keeps the first.
    private func remember(_ key: UInt64, _ entry: Entry) {
        entries.withLock { table in
            if table.count < capacity { table.insert(key, entry) }
        }
    }
}
