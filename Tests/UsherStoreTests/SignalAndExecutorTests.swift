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
