import Testing
import UsherStore

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
