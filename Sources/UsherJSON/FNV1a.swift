/// FNV-1a: a stable, fast hash of bytes (the rule-set version, variant rotation, the
/// trigger's tag, a worker's share of conversations, ids of input lines without one). Unlike
/// Swift's `Hasher`, the same input gives the same value in every process and every build, so
/// it may be stored, compared across workers and written into SQL.
///
/// A value of this type hashes incrementally in 64 bits; `hash32` is the 32-bit variant, for
/// callers whose stored or shared values were made with it. Inlinable, so that each caller's
/// loop is specialised for its byte collection instead of going through `Sequence` per byte.
public struct FNV1a: Sendable {
    @usableFromInline static let prime: UInt64 = 0x0000_0100_0000_01b3
    @usableFromInline var state: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The hash of everything added so far (the offset basis when nothing was).
    @inlinable public var value: UInt64 { state }

    /// A hash of nothing yet.
    @inlinable public init() {}

    /// Adds one byte.
    @inlinable @inline(__always)
    public mutating func add(_ byte: UInt8) { state = (state ^ UInt64(byte)) &* Self.prime }

    /// Adds bytes in order.
    @inlinable
    public mutating func add(_ bytes: some Sequence<UInt8>) {
        for b in bytes { add(b) }
    }

    /// The 64-bit hash of a string's UTF-8 bytes.
    @inlinable
    public static func hash(_ s: String) -> UInt64 { hash(s.utf8) }

    /// The 64-bit hash of `bytes`.
    @inlinable
    public static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var h = FNV1a()
        h.add(bytes)
        return h.value
    }

    /// The 32-bit hash of a string's UTF-8 bytes (FNV-1a with the 32-bit basis and prime).
    @inlinable
    public static func hash32(_ s: String) -> UInt32 {
        var h: UInt32 = 0x811c_9dc5
        for b in s.utf8 { h = (h ^ UInt32(b)) &* 0x0100_0193 }
        return h
    }
}
