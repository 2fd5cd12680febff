import Foundation
import Synchronization

/// A thread of its own that owns one database connection: every blocking call on the connection
/// (SQLite, libpq) runs here, never on the cooperative thread pool.
///
/// Callers hand it closures (`submit`, bridged with continuations by the stores). It is also a
/// `TaskExecutor`: a task that prefers it runs on this thread — the worker runs its stages so
/// (`ChatStore.executor(for:)`) — and its store calls then run at once instead of waking this
/// thread and then the caller's again. Once stopped it ends when its queue is empty; jobs that
/// come later run on a global thread, so that a task is never stranded.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `threadID` is written once by the thread before `started` is signalled and
    // only read after `init` has waited for that signal; everything else is behind `queue`.

    private enum Item: Sendable {
        case work(@Sendable () -> Void)
        case job(UnownedJob)
    }

    private struct Queue {
        var items: [Item] = []
        var sleeping = false
        var stopped = false
        /// The loop has returned: nothing queued now would ever run.
        var exited = false
    }

    private let queue = Locked(Queue())
    private let wake = DispatchSemaphore(value: 0)
    /// Items pushed and not yet taken: lets the thread spin briefly before it sleeps.
    private let queued = Atomic<Int>(0)
    /// How long the thread polls for more work before it sleeps: a caller that awaits one call
    /// and makes the next within this window finds the thread awake (no futex wake-up).
    private let spin: Duration
    private nonisolated(unsafe) var threadID = pthread_self()

    /// `spin`: how long the thread polls for more work before it sleeps (zero: it sleeps at once,
    /// for a thread whose caller waits on a server that needs the cores meanwhile).
    public init(name: String, spin: Duration = .microseconds(50)) {
        self.spin = spin
        let started = DispatchSemaphore(value: 0)
        startThread(named: name) { [self] in
            threadID = pthread_self()
            started.signal()
            loop()
        }
        started.wait()
    }

    /// Whether the caller is running on this thread.
    public var isCurrent: Bool {
        // Once the thread has ended its id may be another thread's.
        pthread_equal(pthread_self(), threadID) != 0 && !queue.withLock { $0.exited }
    }

    /// Runs `work` on the thread, after what is already queued. Returns `false` once stopped.
    @discardableResult
    public func submit(_ work: @escaping @Sendable () -> Void) -> Bool {
        push(.work(work))
    }

    /// Runs `body` on the thread and returns what it returns: at once when the caller is on the
    /// thread already, else by handing it over and waiting. Throws `stopped` once the thread ends.
    public func run<T: Sendable>(stopped: @autoclosure () -> any Error,
                                 _ body: @escaping @Sendable () throws -> T) async throws -> T {
        if isCurrent { return try body() }
        return try await withCheckedThrowingContinuation { (c: CheckedContinuation<T, any Error>) in
            if !submit({ c.resume(with: Result { try body() }) }) { c.resume(throwing: stopped()) }
        }
    }

    /// Lets the thread finish what is queued, then end.
    public func stop() {
        let signal = queue.withLock { q -> Bool in
            q.stopped = true
            defer { q.sleeping = false }
            return q.sleeping
        }
        if signal { wake.signal() }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !push(.job(job)) {
            // The thread has ended: still run the job somewhere, so a task is never stranded.
            DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    private func push(_ item: Item) -> Bool {
        let (accepted, signal) = queue.withLock { q -> (Bool, Bool) in
            if q.exited { return (false, false) }
            if q.stopped, case .work = item { return (false, false) }
            q.items.append(item)
            queued.add(1, ordering: .releasing)
            defer { q.sleeping = false }
            return (true, q.sleeping)
        }
        if signal { wake.signal() }
        return accepted
    }

    private func loop() {
        let executor = asUnownedTaskExecutor()
        let clock = ContinuousClock()
        var idleSince: ContinuousClock.Instant?
        while true {
            if queued.load(ordering: .acquiring) == 0, !queue.withLock({ $0.stopped }) {
                // Nothing queued: poll a little before going to sleep.
                let since = idleSince ?? clock.now
                idleSince = since
                if clock.now - since < spin {
                    sched_yield()
                    continue
                }
            }
            idleSince = nil
            let (items, done) = queue.withLock { q -> ([Item], Bool) in
                if q.items.isEmpty {
                    if q.stopped {
                        q.exited = true
                        return ([], true)
                    }
                    q.sleeping = true
                    return ([], false)
                }
                let out = q.items
                q.items.removeAll(keepingCapacity: true)
                queued.subtract(out.count, ordering: .relaxed)
                return (out, false)
            }
            if done { return }
            if items.isEmpty {
                wake.wait()
                continue
            }
            for item in items {
                switch item {
                case let .work(work): work()
                case let .job(job): job.runSynchronously(on: executor)
                }
            }
        }
    }
}

/// Starts a thread named `name` — for Foundation, and for `top -H`, `perf` and `/proc` too
/// (`nameThread`) — that runs `body`.
package func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        nameThread(name)
        body()
    }
    thread.name = name
    thread.start()
}

/// Names the calling thread for the system (Linux keeps 15 bytes: the end of `name`, which tells
/// the threads apart). Best effort: nothing happens where it cannot.
private func nameThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    let bytes = Array(name.utf8.suffix(15))
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}
