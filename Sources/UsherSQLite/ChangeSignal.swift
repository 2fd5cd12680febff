import Foundation

/// Wakes `waitForChanges` callers the moment a write through any `SQLiteStore` of this process
/// commits on the same database file. Writes by other processes are seen by polling
/// `PRAGMA data_version` instead.
final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Locked(State())

    /// Bumped by every `notify()`.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Something was written: wake every waiter.
    func notify() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.generation &+= 1
            if s.waiters.isEmpty { return [] }
            let out = Array(s.waiters.values)
            s.waiters.removeAll(keepingCapacity: true)
            return out
        }
        for w in waiters { w.resume() }
    }

    /// Returns when `generation` moves past `seen`, after `timeout`, or on cancellation —
    /// whichever comes first. No polling: the timeout is a Dispatch timer.
    func wait(since seen: UInt64, timeout: Duration) async {
        let id = state.withLock { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.generation != seen || Task.isCancelled { return true }
                    s.waiters[id] = c
                    return false
                }
                if now {
                    c.resume()
                    return
                }
                let nanos = max(0, timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanos))) { [self] in
                    resume(id)
                }
            }
        } onCancel: {
            resume(id)
        }
    }

    private func resume(_ id: UInt64) {
        if let c = state.withLock({ $0.waiters.removeValue(forKey: id) }) { c.resume() }
    }

    // MARK: one signal per database file in this process

    private static let registry = Locked<[String: WeakSignal]>([:])

    private struct WeakSignal: @unchecked Sendable {
        // @unchecked: a weak reference to a Sendable class, only touched under the registry lock.
        weak var signal: ChangeSignal?
    }

    /// The signal shared by every store of this process on the file at `path`.
    static func shared(for path: String) -> ChangeSignal {
        let key = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        return registry.withLock { r in
            if let s = r[key]?.signal { return s }
            if r.count > 64 { r = r.filter { $0.value.signal != nil } }
            let s = ChangeSignal()
            r[key] = WeakSignal(signal: s)
            return s
        }
    }
}
