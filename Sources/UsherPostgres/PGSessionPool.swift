import UsherStore

/// A few sessions for commits, so that a worker can write its next batch while the last one is
/// still on its way (`Worker.Options.writesInFlight`). A call takes the session with the fewest
/// calls running or queued on it; each session connects on its first call, so sessions never
/// used cost nothing.
final class PGSessionPool: Sendable {
    private let sessions: [PGSession]
    private let users: Locked<[Int]>

    init(count: Int, make: (Int) -> PGSession) {
        sessions = (0..<max(1, count)).map(make)
        users = Locked(Array(repeating: 0, count: sessions.count))
    }

    /// On the session whose thread the caller is on (a write the store put there), else on the
    /// one with the fewest calls.
    func run<T: Sendable>(_ body: @escaping @Sendable (PGConnection) throws -> T) async throws -> T {
        let here = sessions.firstIndex { $0.executor?.isCurrent == true }
        let i = users.withLock { u in
            let i = here ?? u.indices.min { u[$0] < u[$1] }!
            u[i] += 1
            return i
        }
        defer { users.withLock { $0[i] -= 1 } }
        return try await sessions[i].run(body)
    }

    /// The thread of the session for the worker's `n`-th write: writes in flight at once go to
    /// different sessions.
    func executor(_ n: Int) -> ThreadExecutor? { sessions[n % sessions.count].executor }

    /// Runs `body` on every session in turn (each connects first).
    func each(_ body: @escaping @Sendable (PGConnection) throws -> Void) async throws {
        for s in sessions { try await s.run(body) }
    }

    func close() async {
        for s in sessions { await s.close() }
    }
}
