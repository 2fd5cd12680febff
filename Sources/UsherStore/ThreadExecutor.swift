import Foundation
import Synchronization

/// A thread of its own that owns one database connection: every blocking call on the connection
/// (SQLite, libpq) runs here, never on the cooperative thread pool.
///
/// Callers hand it closures (`submit`, bridged with continuations by the stores). It is also a
/// `TaskExecutor`: a task that prefers it runs on this thread — the worker runs its stages so
/// (`TunableStore.workerExecutor`) — and its store calls then run at once instead of waking this
/// thread and then the caller's again. Once stopped it ends when its queue is empty; jobs that
/// come later run on a global thread, so that a task is never stranded.
///
/// It can also wait for sockets (`watch`, `ready`): a thread that owns several connections —
/// the PostgreSQL store's LISTEN, reading and commit connections — sleeps in one `poll` on all
/// of them and its queue, so a NOTIFY, a commit's reply and the task waiting for it meet on one
/// thread, without a thread switch between them.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `threadID` is written once by the thread before `started` is signalled and
    // only read after `init` has waited for that signal; `watches` only on the thread;
    // everything else is behind `queue`.

    private enum Item: Sendable {
        case work(@Sendable () -> Void)
        case job(UnownedJob)
    }

    /// How the thread sleeps: on `wake` when it watches no socket, else in `poll`, woken by
    /// `wakePipe`.
    private enum Sleep { case awake, semaphore, poll }

    private struct Queue {
        var items: [Item] = []
        var sleeping = Sleep.awake
        var stopped = false
        /// The loop has returned: nothing queued now would ever run.
        var exited = false
    }

    private let queue = Locked(Queue())
    private let wake = DispatchSemaphore(value: 0)
    /// A pipe that wakes the thread from `poll` (made at the first `watch`): read end, write end.
    private nonisolated(unsafe) var wakePipe: (read: Int32, write: Int32) = (-1, -1)
    /// Sockets the thread waits for, each with what to call (once) when it is ready.
    private nonisolated(unsafe) var watches: [Watch] = []

    private struct Watch {
        var fd: Int32
        var events: Int16
        var handler: () -> Void
    }
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

    deinit {
        // Closed only now: a `stop` or `push` racing with the thread's end may still write to it.
        if wakePipe.read >= 0 {
            close(wakePipe.read)
            close(wakePipe.write)
        }
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

    /// Lets the thread finish what is queued and what waits for a socket, then end.
    public func stop() {
        let sleep = queue.withLock { q -> Sleep in
            q.stopped = true
            defer { q.sleeping = .awake }
            return q.sleeping
        }
        rouse(sleep)
    }

    /// Calls `handler` on this thread, once, when `fd` is readable (or `writable`) — or failed:
    /// hung up, closed. Only on the thread itself; a watch of the same fd replaces the last.
    /// The thread then sleeps in `poll`, and between jobs looks at the sockets too, so that a
    /// busy queue does not starve them.
    public func watch(_ fd: Int32, writable: Bool = false, _ handler: @escaping () -> Void) {
        precondition(isCurrent, "ThreadExecutor.watch off its thread")
        if wakePipe.read < 0 {
            var ends: [Int32] = [-1, -1]
            precondition(pipe(&ends) == 0, "ThreadExecutor: no pipe (errno \(errno))")
            for fd in ends {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            wakePipe = (ends[0], ends[1])
        }
        watches.removeAll { $0.fd == fd }
        watches.append(Watch(fd: fd, events: Int16(writable ? POLLOUT : POLLIN), handler: handler))
    }

    /// Stops watching `fd` (before its connection closes it: the number may be reused). Only on
    /// the thread itself.
    public func unwatch(_ fd: Int32) {
        precondition(isCurrent, "ThreadExecutor.unwatch off its thread")
        watches.removeAll { $0.fd == fd }
    }

    /// Returns when `fd` is readable (or `writable`), or failed. Called by a task running on
    /// this thread (one that prefers it): it resumes here.
    public func ready(_ fd: Int32, writable: Bool = false) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            watch(fd, writable: writable) { c.resume() }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if !push(.job(job)) {
            // The thread has ended: still run the job somewhere, so a task is never stranded.
            DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    private func push(_ item: Item) -> Bool {
        let (accepted, sleep) = queue.withLock { q -> (Bool, Sleep) in
            if q.exited { return (false, .awake) }
            if q.stopped, case .work = item { return (false, .awake) }
            q.items.append(item)
            queued.add(1, ordering: .releasing)
            defer { q.sleeping = .awake }
            return (true, q.sleeping)
        }
        rouse(sleep)
        return accepted
    }

    /// Wakes the thread from how it went to sleep.
    private func rouse(_ sleep: Sleep) {
        switch sleep {
        case .awake: break
        case .semaphore: wake.signal()
        case .poll:
            var byte: UInt8 = 1
            _ = write(wakePipe.write, &byte, 1)
        }
    }

    /// Calls the handlers of the watched sockets that are ready, waiting for one (or for
    /// `wakePipe`) when `block`.
    private func pollWatches(block: Bool) {
        var fds = watches.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
        if block { fds.append(pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)) }
        let n = poll(&fds, nfds_t(fds.count), block ? -1 : 0)
        // Awake: what the handlers queue needs no wake-up through the pipe.
        if block { queue.withLock { $0.sleeping = .awake } }
        guard n > 0 else { return }
        if block, fds.last!.revents != 0 {
            var bytes = (UInt64(0), UInt64(0))
            while withUnsafeMutableBytes(of: &bytes, { read(wakePipe.read, $0.baseAddress, $0.count) }) > 0 {}
        }
        // Taken off the list before any handler runs: a handler may watch again.
        var ready: [() -> Void] = []
        for p in fds.prefix(watches.count) where p.revents != 0 {
            if let i = watches.firstIndex(where: { $0.fd == p.fd }) { ready.append(watches.remove(at: i).handler) }
        }
        for handler in ready { handler() }
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
            let polling = !watches.isEmpty
            let (items, done) = queue.withLock { q -> ([Item], Bool) in
                if q.items.isEmpty {
                    // Stopped: it ends once no task waits for a socket either.
                    if q.stopped, !polling {
                        q.exited = true
                        return ([], true)
                    }
                    q.sleeping = polling ? .poll : .semaphore
                    return ([], false)
                }
                let out = q.items
                q.items.removeAll(keepingCapacity: true)
                queued.subtract(out.count, ordering: .relaxed)
                return (out, false)
            }
            if done { return }
            if items.isEmpty {
                if polling { pollWatches(block: true) } else { wake.wait() }
                continue
            }
            for item in items {
                switch item {
                case let .work(work): work()
                case let .job(job): job.runSynchronously(on: executor)
                }
            }
            if !watches.isEmpty { pollWatches(block: false) }
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
