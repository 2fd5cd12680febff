import Foundation
import Synchronization

/// Wakes `waitForChanges` callers when the listener hears a NOTIFY. No polling: the timeout is
/// a Dispatch timer.
final class PGSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    var generation: UInt64 { state.withLock { $0.generation } }

    func notify() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.generation &+= 1
            defer { s.waiters.removeAll(keepingCapacity: true) }
            return Array(s.waiters.values)
        }
        for w in waiters { w.resume() }
    }

    /// Returns when `generation` moves past `seen`, after `timeout`, or on cancellation.
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
                if now { return c.resume() }
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
}
