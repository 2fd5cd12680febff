import Testing
@testable import UsherStore

@Suite("Thread executor")
struct ThreadExecutorTests {
    /// A task that prefers the executor runs on its thread, also after a suspension, and so do
    /// its child tasks; once stopped, tasks that prefer it still run (on the global executor).
    @Test func runsTasksOnItsThreadUntilStopped() async throws {
        let executor = ThreadExecutor(name: "usher-test")
        #expect(!executor.isCurrent)
        let here = await Task(executorPreference: executor) { () async -> [Bool] in
            let first = executor.isCurrent
            try? await Task.sleep(for: .milliseconds(5))
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
        try await Task.sleep(for: .milliseconds(20))   // the thread ends
        let after = await Task(executorPreference: executor) { executor.isCurrent }.value
        #expect(!after)
    }
}

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

    /// Timeouts fire in their order, whatever order the waits began in.
    @Test func timeoutsFireInTheirOrder() async {
        let signal = ChangeSignal()
        let clock = ContinuousClock()
        let start = clock.now
        let ends = await withTaskGroup(of: (Int, Duration).self) { group in
            for (i, ms) in [300, 100, 200, 50].enumerated() {
                group.addTask {
                    await signal.wait(since: signal.generation, timeout: .milliseconds(ms))
                    return (i, clock.now - start)
                }
            }
            var out: [Int: Duration] = [:]
            for await (i, d) in group { out[i] = d }
            return out
        }
        #expect(ends[3]! >= .milliseconds(45) && ends[1]! >= .milliseconds(95))
        #expect(ends[2]! >= .milliseconds(195) && ends[0]! >= .milliseconds(295))
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
