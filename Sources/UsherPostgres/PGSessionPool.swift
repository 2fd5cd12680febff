import UsherStore

/// A few sessions for commits, so that a worker can write its next batch while the last one is
/// still on its way (`Worker.Options.writesInFlight`). They have no threads of their own: every
/// call runs on `thread` (the store's reading thread), and a commit waiting for the server
/// lets that thread go on (`PGConnection.pipeline(_:on:)`) — a NOTIFY, the read and decision it
/// starts, and the commit that follows meet on one thread, with no switch between threads.
///
/// A call takes a session no other call is using, waiting for one when all are; each connects
/// on its first call, so sessions never used cost nothing.
final class PGSessionPool: Sendable {
    private let sessions: [PGSession]
    let thread: ThreadExecutor
    private let use: Locked<Use>

    private struct Use {
        var free: [Int]
        var waiting: [CheckedContinuation<Int, Never>] = []
        init(_ count: Int) { free = Array((0..<count).reversed()) }
    }

    init(count: Int, on thread: ThreadExecutor, make: (Int) -> PGSession) {
        sessions = (0..<max(1, count)).map(make)
        self.thread = thread
        use = Locked(Use(sessions.count))
    }

    /// Runs `body` on `thread` with a session no other call is using (the thread too, for
    /// `pipeline(_:on:)`): at once when the caller is on the thread (a write the store put
    /// there), else by going there.
    func run<T: Sendable>(_ body: @escaping @Sendable (PGConnection, ThreadExecutor) async throws -> T) async throws -> T {
        try await onThread {
            let i = await self.take()
            defer { self.give(i) }
            return try await self.sessions[i].runHere { db in try await body(db, self.thread) }
        }
    }

    /// Runs `body` on every session in turn (each connects first), once no other call uses it.
    func each(_ body: @escaping @Sendable (PGConnection) throws -> Void) async throws {
        try await onThread {
            var taken: [Int] = []
            defer { for i in taken { self.give(i) } }
            for _ in self.sessions { taken.append(await self.take()) }
            for i in taken { try self.sessions[i].runHere(connect: true, body) }
        }
    }

    private func onThread<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        if thread.isCurrent { return try await body() }
        return try await Task(executorPreference: thread) { try await body() }.value
    }

    private func take() async -> Int {
        if let i = use.withLock({ $0.free.popLast() }) { return i }
        return await withCheckedContinuation { c in
            let i = use.withLock { u -> Int? in
                if let i = u.free.popLast() { return i }
                u.waiting.append(c)
                return nil
            }
            if let i { c.resume(returning: i) }
        }
    }

    private func give(_ i: Int) {
        let next = use.withLock { u -> CheckedContinuation<Int, Never>? in
            if u.waiting.isEmpty {
                u.free.append(i)
                return nil
            }
            return u.waiting.removeFirst()
        }
        next?.resume(returning: i)
    }

    func close() async {
        for s in sessions { _ = try? await thread.run(stopped: PGSession.closedError) { s.closeHere() } }
    }
}
