#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The keys of an object whose shape is known, for `JSONReader.object(keys:)`: each key read is
/// found by its UTF-8 bytes, without building a `String`. The keys sit one after another in one
/// buffer, so a lookup touches no reference count (an array of arrays costs a retain and a
/// release per key compared, which was a fifth of reading a state).
public struct JSONKeys: Sendable {
    /// The keys, in the order given.
    public let names: [String]
    private let bytes: [UInt8]
    /// Where each key ends in `bytes`.
    private let ends: [Int]

    /// The keys `names`; `object(keys:)` passes on their positions in it.
    public init(_ names: [String]) {
        self.names = names
        var bytes: [UInt8] = []
        var ends: [Int] = []
        for name in names {
            bytes += name.utf8
            ends.append(bytes.count)
        }
        self.bytes = bytes
        self.ends = ends
    }

    /// The position in `names` of the key whose UTF-8 is `key`, trying `names[hint]` first and
    /// going round from there: an object written in the order of `names` (as this project's
    /// writers write them) costs one comparison per key.
    @usableFromInline
    func index(of key: UnsafeBufferPointer<UInt8>, hint: Int) -> Int? {
        bytes.withUnsafeBufferPointer { all in
            ends.withUnsafeBufferPointer { ends in
                let count = ends.count
                var n = hint < count ? hint : 0
                for _ in 0..<count {
                    let start = n == 0 ? 0 : ends[n - 1]
                    if ends[n] - start == key.count,
                       key.isEmpty || memcmp(all.baseAddress! + start, key.baseAddress!, key.count) == 0 {
                        return n
                    }
                    n = n + 1 == count ? 0 : n + 1
                }
                return nil
            }
        }
    }
}
