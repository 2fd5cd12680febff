internal import CStemmer
import Synchronization

/// A Snowball stemmer for one language (Debian's libstemmer): "refunds", "refunded" and
/// "refunding" all give "refund". Input and output are UTF-8, lower case.
///
/// A libstemmer stemmer keeps its work buffer inside itself, so one must not stem on two threads
/// at once: each call takes a stemmer from a small pool (making one when every stemmer is busy)
/// and puts it back, so decisions on several threads never wait for each other.
public final class Stemmer: Sendable {
    /// The language code the stemmer was made for (`en`, `es`).
    public let language: String
    /// Idle stemmers. `sb_stemmer` pointers are owned here and freed in `deinit`.
    private let pool: Mutex<[UnsafeSendable]>

    /// An `sb_stemmer` pointer, moved between threads only through the pool's lock.
    private struct UnsafeSendable: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// The stemmer for an ISO 639-1 code (`en`, `es`, `de`…); nil when Snowball has none for it
    /// (Chinese, Japanese, Thai and Korean among them).
    public init?(language: String) {
        guard !language.isEmpty, language.utf8.allSatisfy({ $0 &- 0x61 < 26 }),
              let first = sb_stemmer_new(language, nil) else { return nil }
        self.language = language
        pool = Mutex([UnsafeSendable(pointer: first)])
    }

    deinit {
        pool.withLock { stemmers in
            for s in stemmers { sb_stemmer_delete(s.pointer) }
        }
    }

    /// Whether Snowball has a stemmer for this language code.
    public static func isAvailable(_ language: String) -> Bool { Stemmer(language: language) != nil }

    /// The stem of one word, given as UTF-8 bytes (normalised: lower case).
    public func stem(_ word: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        let stemmer = pool.withLock { $0.popLast() } ?? sb_stemmer_new(language, nil).map(UnsafeSendable.init)
        guard let stemmer else { return Array(word) }   // out of memory: the word stands for itself
        defer { pool.withLock { $0.append(stemmer) } }
        guard let base = word.baseAddress, let out = sb_stemmer_stem(stemmer.pointer, base, Int32(word.count)) else {
            return Array(word)
        }
        return Array(UnsafeBufferPointer(start: out, count: Int(sb_stemmer_length(stemmer.pointer))))
    }

    /// The stem of one word.
    public func stem(_ word: String) -> String {
        word.withUTF8Bytes { String(decoding: stem($0), as: UTF8.self) }
    }
}
