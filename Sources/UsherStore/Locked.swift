import Foundation

/// A value behind a pthread mutex (`NSLock`).
///
/// Used instead of `Synchronization.Mutex` where threads contend: `Mutex`'s slow path runs in
/// the uninstrumented runtime, so ThreadSanitizer misses the hand-over and reports races that
/// are not there — and `swift test --sanitize=thread` must stay clean to mean anything.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched between `lock()` and `unlock()`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
