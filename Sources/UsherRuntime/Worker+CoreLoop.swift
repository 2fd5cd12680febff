import Foundation
import UsherStore

extension Worker {
    /// The loop of one bot on a store with the core contract alone: `Schedule` decides what to
    /// do next, this runs it — reads, decisions and writes (each write a child task, up to
    /// `writesInFlight` at once), position moves and idle waits — and tells it how it went.
    func follow(_ bot: BotRuntime) async throws {
        let store = self.store
        let now = uptime
        let position = try await retrying(bot, "position") { try await store.position(bot: bot.id) }
        var schedule = Schedule(position: position,
                                options: .init(batchSize: options.batchSize, writesInFlight: options.writesInFlight,
                                               positionInterval: options.cursorInterval, idleWait: options.idleWait),
                                now: now())
        var reportedReady = false
        try await withThrowingTaskGroup(of: (Int, Written).self) { writes in
            while true {
                if isStopping || Task.isCancelled { schedule.stop() }
                switch schedule.next(now: now()) {
                case let .read(after, limit):
                    let page = try await retrying(bot, "pending") { try await store.pending(bot: bot.id, after: after, limit: limit) }
                    schedule.read(page, now: now())
                case let .write(id, messages):
                    let prepared = try await prepare(messages, states: nil, bot)
                    writes.addTask { (id, try await self.write(prepared, bot)) }
                case .awaitWrite:
                    guard let (id, done) = try await writes.next() else { continue }
                    schedule.written(id, unfinished: done.unfinished, now: now())
                case let .move(to):
                    try await retrying(bot, "move") { try await store.move(bot: bot.id, to: to) }
                    schedule.moved(to: to, now: now())
                case let .idle(after, timeout):
                    if !reportedReady {
                        reportedReady = true
                        reportCaughtUp(bot, at: schedule.position.description)
                    }
                    try await waitUnlessStopped(timeout: timeout, bot) { try await store.waitForChanges(after: after, timeout: timeout) }
                    schedule.waited()
                case .stopped:
                    return
                }
            }
        }
    }

    /// Runs `wait` (a wait for the store to change, at most `timeout`) until it returns or a
    /// stop is requested, whichever comes first: the wait is cancelled then.
    func waitUnlessStopped(timeout: Duration, _ bot: BotRuntime, _ wait: @escaping @Sendable () async throws -> Void) async throws {
        let seen = stopSignal.generation
        guard !isStopping else { return }
        try await withThrowingTaskGroup(of: Void.self) { race in
            race.addTask { try await self.retrying(bot, "wait") { try await wait() } }
            race.addTask { await self.stopSignal.wait(since: seen, timeout: timeout) }
            try await race.next()
            race.cancelAll()
        }
    }
}
