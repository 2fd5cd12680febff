import Foundation
import Testing

/// `usher run` killed with SIGKILL at random points — at least `minimumKills` times, and until
/// `feed` is done — while the receiver of its calls goes down for stretches on a clock of its own:
/// down from the start until it has refused a call, then 100–500 ms down after every 200–600 ms
/// up. The machinery of the webhook's and Chatwoot's crash tests; each counts what its receiver
/// got afterwards.
struct KillLoop {
    var kills = 0
    /// Stretches the receiver was down.
    var stretches = 0
    /// The worker running when the loop ended (the test stops it).
    var worker: WorkerProcess

    static func run(minimumKills: Int = 30, start: () throws -> WorkerProcess, setDown: @escaping @Sendable (Bool) -> Void,
                    refused: @escaping @Sendable () -> Int, feed: @escaping @Sendable () async throws -> Void) async throws -> KillLoop {
        let fed = Flag()
        let feeding = Task {
            defer { fed.set() }
            try await feed()
        }
        let killed = Flag()
        setDown(true)
        let flapping = Task {
            var stretches = 1
            var rng = SystemRandomNumberGenerator()
            while refused() == 0 { try await Task.sleep(for: .milliseconds(5)) }
            setDown(false)
            while !killed.isSet {
                try await Task.sleep(for: .milliseconds(Int.random(in: 200...600, using: &rng)))
                setDown(true)
                stretches += 1
                try await Task.sleep(for: .milliseconds(Int.random(in: 100...500, using: &rng)))
                setDown(false)
            }
            return stretches
        }
        var loop = KillLoop(worker: try start())
        var rng = SystemRandomNumberGenerator()
        while loop.kills < minimumKills || !fed.isSet {
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...400, using: &rng)))
            guard loop.worker.process.isRunning else {
                Issue.record("the worker exited by itself (status \(loop.worker.process.terminationStatus)):\n\(loop.worker.log)")
                break
            }
            loop.worker.kill9()
            loop.kills += 1
            loop.worker = try start()
            if loop.kills > 300 { break }
        }
        killed.set()
        loop.stretches = try await flapping.value
        setDown(false)
        try await feeding.value
        return loop
    }
}
