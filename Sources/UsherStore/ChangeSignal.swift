import Foundation

/// Wakes `waitForChanges` callers when a store learns that something was written: the SQLite
/// store when a write of this process commits on the same file, the PostgreSQL store on every
/// NOTIFY. `generation` lets a caller wait only if nothing happened since it last looked.
package final class ChangeSignal: Sendable {
    private struct Waiter {
        var continuation: CheckedContinuation<Void, Never>
        /// The timeout, cancelled when the waiter is woken first (a timer left to fire would
        /// wake Dispatch's threads for nothing: the worker waits a thousand times a second).
        var timer: (any DispatchSourceTimer)?
    }

    private struct State {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
    }

    private let state = Locked(State())

    package init() {}

    /// Bumped by every `notify()`.
    package var generation: UInt64 { state.withLock { $0.generation } }

    /// Something was written: wake every waiter.
    package func notify() {
        let waiters = state.withLock { s -> [Waiter] in
            s.generation &+= 1
            if s.waiters.isEmpty { return [] }
            let out = Array(s.waiters.values)
            s.waiters.removeAll(keepingCapacity: true)
            return out
        }
        for w in waiters {
            w.timer?.cancel()
            w.continuation.resume()
        }
    }

    /// Returns when `generation` moves past `seen`, after `timeout`, or on cancellation —
    /// whichever comes first. No polling: the timeout is a Dispatch timer.
    package func wait(since seen: UInt64, timeout: Duration) async {
        let id = state.withLock { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.generation != seen || Task.isCancelled { return true }
                    s.waiters[id] = Waiter(continuation: c)
                    return false
                }
                if now {
                    c.resume()
                    return
                }
                let nanos = max(0, timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
                let timer = DispatchSource.makeTimerSource(queue: .global())
                timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: nanos)))
                timer.setEventHandler { [self] in resume(id) }
                timer.activate()
                // Woken meanwhile: the timer is not needed.
                let kept = state.withLock { s -> Bool in
                    guard s.waiters[id] != nil else { return false }
                    s.waiters[id]!.timer = timer
                    return true
                }
                if !kept { timer.cancel() }
            }
        } onCancel: {
            resume(id)
        }
    }

    private func resume(_ id: UInt64) {
        guard let w = state.withLock({ $0.waiters.removeValue(forKey: id) }) else { return }
        w.timer?.cancel()
        w.continuation.resume()
    }
}
