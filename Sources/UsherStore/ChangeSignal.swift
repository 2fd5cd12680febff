import Foundation

/// Wakes waiting tasks when a store learns that something was written: the SQLite store when a
/// write of this process commits on the same file, the PostgreSQL store on every NOTIFY (and the
/// worker when one of its writes ends). `generation` lets a caller wait only if nothing happened
/// since it last looked; `first(of:timeout:)` waits for whichever of several signals moves first.
///
/// The worker waits on signals about a thousand times a second under load, so a wait costs no
/// task, no timer source and no system call of its own: a waiter is a continuation registered
/// with each signal it waits on, and its timeout an entry in one process-wide deadline list
/// (`Deadlines`) whose thread wakes only when a timeout is due.
public final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [ObjectIdentifier: (waiter: Waiter, index: Int)] = [:]
    }

    private let state = Locked(State())

    public init() {}

    /// Bumped by every `notify()`.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// Something was written: wake every waiter.
    public func notify() {
        let waiters = state.withLock { s -> [(waiter: Waiter, index: Int)] in
            s.generation &+= 1
            if s.waiters.isEmpty { return [] }
            defer { s.waiters.removeAll(keepingCapacity: true) }
            return Array(s.waiters.values)
        }
        for w in waiters { w.waiter.wake(w.index) }
    }

    /// Returns when `generation` moves past `seen`, after `timeout`, or on cancellation —
    /// whichever comes first.
    public func wait(since seen: UInt64, timeout: Duration) async {
        _ = await Self.first(of: [(self, seen)], timeout: timeout)
    }

    /// Waits until one of `signals` moves past the generation given with it, and returns its
    /// index (the first found moved, when several have); nil after `timeout` or on cancellation.
    public static func first(of signals: [(signal: ChangeSignal, since: UInt64)], timeout: Duration) async -> Int? {
        let waiter = Waiter()
        let woken = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Int?, Never>) in
                waiter.set(c)
                for (i, s) in signals.enumerated() where !s.signal.register(waiter, index: i, since: s.since) {
                    waiter.wake(i)
                    return
                }
                waiter.deadline = Deadlines.shared.schedule(after: timeout, waiter)
            }
        } onCancel: {
            waiter.wake(nil)
        }
        for s in signals { s.signal.unregister(waiter) }
        if let d = waiter.deadline { Deadlines.shared.cancel(d) }
        return woken
    }

    /// Adds `waiter`, unless the generation moved past `seen` already (false).
    private func register(_ waiter: Waiter, index: Int, since seen: UInt64) -> Bool {
        state.withLock { s in
            guard s.generation == seen else { return false }
            s.waiters[ObjectIdentifier(waiter)] = (waiter, index)
            return true
        }
    }

    private func unregister(_ waiter: Waiter) {
        state.withLock { _ = $0.waiters.removeValue(forKey: ObjectIdentifier(waiter)) }
    }
}

/// One wait: resumed once, by the first of its signals, its deadline or its cancellation —
/// whichever comes first, even before the continuation is set.
final class Waiter: @unchecked Sendable {
    // @unchecked: `phase` is behind `lock`; `deadline` is written before the continuation can
    // resume (inside its closure) and read after it did.
    private enum Phase {
        case pending
        case waiting(CheckedContinuation<Int?, Never>)
        case woken(Int?)
        case done
    }

    private let lock = NSLock()
    private var phase = Phase.pending
    var deadline: UInt64?

    func set(_ c: CheckedContinuation<Int?, Never>) {
        lock.lock()
        if case .woken(let index) = phase {
            phase = .done
            lock.unlock()
            c.resume(returning: index)
            return
        }
        phase = .waiting(c)
        lock.unlock()
    }

    /// `index`: the signal that moved; nil: timeout or cancellation. Only the first call counts.
    func wake(_ index: Int?) {
        lock.lock()
        switch phase {
        case .pending:
            phase = .woken(index)
            lock.unlock()
        case .waiting(let c):
            phase = .done
            lock.unlock()
            c.resume(returning: index)
        case .woken, .done:
            lock.unlock()
        }
    }
}

/// The timeouts of every wait in the process, on one thread that sleeps until the earliest is
/// due. A wait woken first takes its entry out (`cancel`); the thread drops it when it comes up.
final class Deadlines: @unchecked Sendable {
    // @unchecked: everything but `wakeUp` is behind `lock`.
    static let shared = Deadlines()

    private struct Entry {
        var at: UInt64   // DispatchTime uptime nanoseconds
        var id: UInt64
    }

    private let lock = NSLock()
    private let wakeUp = DispatchSemaphore(value: 0)
    private var heap: [Entry] = []   // a binary min-heap on `at`
    private var live: [UInt64: Waiter] = [:]
    private var nextID: UInt64 = 0
    /// When the thread wakes next (`UInt64.max`: only when signalled).
    private var planned = UInt64.max

    private init() {
        startThread(named: "usher-deadlines") { [self] in loop() }
    }

    /// Wakes `waiter` with nil after `delay`, unless cancelled first. Returns the entry's id.
    func schedule(after delay: Duration, _ waiter: Waiter) -> UInt64 {
        let (seconds, attoseconds) = delay.components
        let offset: UInt64 = seconds < 0 ? 0
            : seconds >= 1 << 32 ? 1 << 62   // over a century: never
            : UInt64(seconds) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        let at = DispatchTime.now().uptimeNanoseconds + offset
        lock.lock()
        nextID &+= 1
        let id = nextID
        live[id] = waiter
        push(Entry(at: at, id: id))
        if heap.count > 1024, heap.count > 4 * live.count {
            // Cancelled entries far in the future pile up: keep the live ones only.
            let kept = heap.filter { live[$0.id] != nil }
            heap.removeAll(keepingCapacity: true)
            for e in kept { push(e) }
        }
        let earlier = at < planned
        if earlier { planned = at }
        lock.unlock()
        if earlier { wakeUp.signal() }
        return id
    }

    func cancel(_ id: UInt64) {
        lock.lock()
        live.removeValue(forKey: id)
        lock.unlock()
    }

    private func loop() {
        var due: [Waiter] = []
        while true {
            lock.lock()
            let now = DispatchTime.now().uptimeNanoseconds
            while let top = heap.first, top.at <= now || live[top.id] == nil {
                pop()
                if let w = live.removeValue(forKey: top.id) { due.append(w) }
            }
            planned = heap.first?.at ?? .max
            let until = planned
            lock.unlock()
            for w in due { w.wake(nil) }
            due.removeAll(keepingCapacity: true)
            _ = wakeUp.wait(timeout: until == .max ? .distantFuture : DispatchTime(uptimeNanoseconds: until))
        }
    }

    private func push(_ e: Entry) {
        heap.append(e)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            if heap[parent].at <= heap[i].at { break }
            heap.swapAt(parent, i)
            i = parent
        }
    }

    private func pop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < heap.count, heap[l].at < heap[m].at { m = l }
            if r < heap.count, heap[r].at < heap[m].at { m = r }
            if m == i { return }
            heap.swapAt(i, m)
            i = m
        }
    }
}
