import Foundation
import Testing
@testable import UsherStore

@Suite("Thread executor", .timeLimit(.minutes(1)))
struct ThreadExecutorTests {
    /// A task that prefers the executor runs on its thread, also after a suspension, and so do
    /// its child tasks; once stopped, tasks that prefer it still run (on the global executor).
    @Test func runsTasksOnItsThreadUntilStopped() async throws {
        let executor = ThreadExecutor(name: "usher-test")
        #expect(!executor.isCurrent)
        let here = await Task(executorPreference: executor) { () async -> [Bool] in
            let first = executor.isCurrent
            await Task.yield()   // suspends: the task is enqueued again, on the executor it prefers
            let child = await withTaskGroup(of: Bool.self) { group in
                group.addTask { executor.isCurrent }
                return await group.next()!
            }
            return [first, executor.isCurrent, child]
        }.value
        #expect(here == [true, true, true])
        // Jobs run in order on the one thread: a thousand increments by tasks on it, unlocked.
        nonisolated(unsafe) var count = 0
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<1_000 { group.addTask(executorPreference: executor) { count += 1 } }
        }
        #expect(count == 1_000)
        executor.stop()
        await Self.ended(executor)
    }

    /// Returns once tasks that prefer `executor` run elsewhere: its thread, stopped, has ended.
    /// Each probe is a job the thread runs if it is still there, ending as soon as its queue is
    /// empty again; a thread that never ends fails the test at its time limit.
    static func ended(_ executor: ThreadExecutor) async {
        while await Task(executorPreference: executor, operation: { executor.isCurrent }).value {
            await Task.yield()
        }
    }
}

extension ThreadExecutorTests {
    /// A task waiting for a socket (`ready`) resumes on the thread once the socket is readable,
    /// while the thread runs other tasks meanwhile; a stop waits for it.
    @Test func aTaskWaitsForASocketOnTheThread() async throws {
        let executor = ThreadExecutor(name: "usher-test-poll", spin: .zero)
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let waiting = Task(executorPreference: executor) { () async -> (Bool, UInt8) in
            await executor.ready(readEnd)
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            return (executor.isCurrent, byte)
        }
        // Other tasks run on the thread while the first waits. The thread runs its jobs in
        // order, so by the time the first of them has run, the waiting task is waiting.
        for i in 0..<100 {
            let here = await Task(executorPreference: executor) { executor.isCurrent }.value
            #expect(here, "task \(i)")
        }
        executor.stop()   // ends only after the waiting task
        // Still there: a stopped thread waits for the task that waits for its socket.
        #expect(await Task(executorPreference: executor) { executor.isCurrent }.value)
        var byte: UInt8 = 42
        #expect(write(writeEnd, &byte, 1) == 1)
        let (onThread, got) = await waiting.value
        #expect(onThread && got == 42)
        await ThreadExecutorTests.ended(executor)
    }

    /// A socket that becomes readable while the thread is busy with a long queue is seen
    /// between jobs, not only once the queue runs dry.
    @Test func aBusyQueueDoesNotStarveASocket() async throws {
        let executor = ThreadExecutor(name: "usher-test-busy", spin: .zero)
        defer { executor.stop() }
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let readEnd = ends[0]
        var byte: UInt8 = 1
        _ = write(ends[1], &byte, 1)
        let seen = Locked(-1)
        let jobs = Locked(0)
        let total = 2_000
        // One job watches the socket (readable already) and queues many more behind it.
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            executor.submit {
                executor.watch(readEnd) { seen.withLock { $0 = jobs.withLock { $0 } } }
                for _ in 0..<total { executor.submit { jobs.withLock { $0 += 1 } } }
                executor.submit { c.resume() }
            }
        }
        // The watch fired after the first batch of jobs, long before the last.
        let at = seen.withLock { $0 }
        #expect(at >= 0 && at < total)
    }
}

/// Real timeouts, waited for: system tests (`make system`).
@Suite("Change signal")
struct ChangeSignalTests {
    /// A wait returns at a notify (long before its timeout), at its timeout, or at once when the
    /// generation moved already.
    @Test func wakesAtANotifyOrItsTimeout() async throws {
        let signal = ChangeSignal()
        let clock = ContinuousClock()
        var start = clock.now
        async let woken: Void = signal.wait(since: 0, timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(20))
        signal.notify()
        await woken
        #expect(clock.now - start < .seconds(30))   // room for a test run that fills the cores
        start = clock.now
        await signal.wait(since: signal.generation, timeout: .milliseconds(50))
        #expect(clock.now - start >= .milliseconds(45))
        start = clock.now
        await signal.wait(since: 0, timeout: .seconds(60))   // generation 1 already
        #expect(clock.now - start < .seconds(30))
        // Many waits in a row, each woken by a notify right after it began.
        for _ in 0..<200 {
            let seen = signal.generation
            async let w: Void = signal.wait(since: seen, timeout: .seconds(60))
            signal.notify()
            await w
        }
        #expect(signal.generation == 201)
        #expect(clock.now - start < .seconds(30))
    }

    /// A wait on two signals returns the index of the one that moved (at once when one moved
    /// already), nil at its timeout; waits woken long before their timeouts leave nothing behind
    /// that delays a later, short timeout.
    @Test func waitsForTheFirstOfTwo() async throws {
        let a = ChangeSignal(), b = ChangeSignal()
        let clock = ContinuousClock()
        var start = clock.now
        async let first = ChangeSignal.first(of: [(a, a.generation), (b, b.generation)], timeout: .seconds(60))
        try await Task.sleep(for: .milliseconds(20))
        b.notify()
        #expect(await first == 1)
        #expect(clock.now - start < .seconds(30))
        #expect(await ChangeSignal.first(of: [(a, 0), (b, 0)], timeout: .seconds(60)) == 1)   // b moved already
        a.notify()
        #expect(await ChangeSignal.first(of: [(a, 0), (b, 1)], timeout: .seconds(60)) == 0)
        // Thousands of long timeouts cancelled early, then a short one: it still fires on time.
        for _ in 0..<5_000 {
            let seen = a.generation
            async let w = ChangeSignal.first(of: [(a, seen), (b, b.generation)], timeout: .seconds(3_600))
            a.notify()
            #expect(await w == 0)
        }
        start = clock.now
        #expect(await ChangeSignal.first(of: [(a, a.generation), (b, b.generation)], timeout: .milliseconds(50)) == nil)
        let waited = clock.now - start
        #expect(waited >= .milliseconds(45) && waited < .seconds(30))
    }

    /// Timeouts fire in their order, whatever order the waits began in. (Hundreds of
    /// milliseconds apart: each wait is seen to end when its task runs again, which a run that
    /// fills the cores can delay by tens of milliseconds.)
    @Test func timeoutsFireInTheirOrder() async {
        let signal = ChangeSignal()
        let clock = ContinuousClock()
        let start = clock.now
        let ends = await withTaskGroup(of: (Int, Duration).self) { group in
            for (i, ms) in [1_200, 300, 700, 50].enumerated() {
                group.addTask {
                    await signal.wait(since: signal.generation, timeout: .milliseconds(ms))
                    return (i, clock.now - start)
                }
            }
            var out: [Int: Duration] = [:]
            for await (i, d) in group { out[i] = d }
            return out
        }
        #expect(ends[3]! >= .milliseconds(45) && ends[1]! >= .milliseconds(295))
        #expect(ends[2]! >= .milliseconds(695) && ends[0]! >= .milliseconds(1_195))
        #expect(ends[3]! <= ends[1]! && ends[1]! <= ends[2]! && ends[2]! <= ends[0]!)
    }

    /// A cancelled wait returns at once.
    @Test func aCancelledWaitReturns() async {
        let signal = ChangeSignal()
        let task = Task { await signal.wait(since: 0, timeout: .seconds(60)) }
        try? await Task.sleep(for: .milliseconds(20))
        let start = ContinuousClock.now
        task.cancel()
        await task.value
        #expect(ContinuousClock.now - start < .seconds(30))
    }
}
