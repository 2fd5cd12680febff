import Synchronization

/// What the stemmers and dictionaries said about the words customers write, remembered: a
/// Snowball stem costs about 250 ns and a dictionary look-up with affix rules more, while
/// customers keep writing the same few thousand words. Shared by every decision of a rule set
/// (a `Mutex`: the lock is held for a look-up, never while stemming), and bounded: once it holds
/// `capacity` words it stops learning new ones, so a flood of made-up words cannot grow it.
final class WordFacts: Sendable {
    /// What is known about one word; nil fields are not known yet.
    struct Facts: Sendable {
        var stems: [[UInt8]?]
        var spelled: Bool?
    }

    private struct Entry: Sendable {
        let word: [UInt8]
        var facts: Facts
    }

    private let entries = Mutex<[UInt64: Entry]>([:])
    private let languages: Int
    private let capacity: Int

    init(languages: Int, capacity: Int = 50_000) {
        self.languages = languages
        self.capacity = capacity
    }

    /// The facts known about `word`.
    func facts(_ word: UnsafeBufferPointer<UInt8>) -> Facts {
        let key = HashSet64.hash(word)
        return entries.withLock { entries in
            guard let entry = entries[key], entry.word.elementsEqual(word) else { return nil }
            return entry.facts
        } ?? Facts(stems: Array(repeating: nil, count: languages), spelled: nil)
    }

    /// Remembers what was learnt about `word` (while there is room).
    func learn(_ word: UnsafeBufferPointer<UInt8>, _ facts: Facts) {
        let key = HashSet64.hash(word)
        entries.withLock { entries in
            if let entry = entries[key] {
                guard entry.word.elementsEqual(word) else { return }   // a hash shared by two words: keep the first
                entries[key]!.facts = facts
            } else if entries.count < capacity {
                entries[key] = Entry(word: Array(word), facts: facts)
            }
        }
    }
}
