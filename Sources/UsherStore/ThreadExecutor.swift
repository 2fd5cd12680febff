import Foundation

/// A task executor that is one thread of its own. A store whose calls block (libpq) runs them
/// on such threads; the worker runs a stage's tasks there too (`ChatStore.executor(for:)`), and
/// a call made on the thread it needs runs at once, where a call from elsewhere would wake that
/// thread and then wake the caller's again — two thread switches per call, which at a thousand
/// messages a second were most of the worker's CPU.
///
/// Jobs run in the order they come. Once stopped, the thread ends when its queue is empty, and
/// jobs that come later run on the global executor.
public final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs`, `thread` and `stopped` are only touched under `lock`.
    private let lock = NSCondition()
    private var jobs: [UnownedJob] = []
    private var thread: pthread_t?
    private var stopped = false

    public init(name: String) {
        let t = Thread { [self] in loop() }
        t.name = name
        t.start()
        lock.lock()
        while thread == nil { lock.wait() }
        lock.unlock()
    }

    private func loop() {
        lock.lock()
        thread = pthread_self()
        lock.broadcast()
        while true {
            while jobs.isEmpty && !stopped { lock.wait() }
            if jobs.isEmpty { break }
            let ready = jobs
            jobs.removeAll(keepingCapacity: true)
            lock.unlock()
            for job in ready { job.runSynchronously(on: asUnownedTaskExecutor()) }
            lock.lock()
        }
        thread = nil   // its id may be another thread's from now on
        lock.unlock()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        if stopped {
            lock.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(job)
        lock.signal()
        lock.unlock()
    }

    /// Whether the caller runs on this executor's thread.
    public var isCurrent: Bool {
        lock.lock()
        defer { lock.unlock() }
        return thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Ends the thread once the jobs already queued have run.
    public func stop() {
        lock.lock()
        stopped = true
        lock.signal()
        lock.unlock()
    }
}
