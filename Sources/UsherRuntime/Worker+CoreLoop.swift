import Foundation
import UsherStore

extension Worker {
    /// The loop of one bot on a store with the core contract alone: `Schedule` decides what to
    /// do next, this runs it — reads, decisions and writes (each write a child task, up to
    /// `writesInFlight` at once), position moves and idle waits — and tells it how it went.
    func follow(_ bot: BotRuntime) async throws {
        let store = self.store
        let started = ContinuousClock.now
        func now() -> Duration { ContinuousClock.now - started }
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
                    try await waitForChanges(after: after, timeout: timeout, bot)
                    schedule.waited()
                case .stopped:
                    return
                }
            }
        }
    }

    /// Waits for the store to change after `position`, at most `timeout`, or until a stop is
    /// requested — whichever comes first (the store's wait is cancelled then).
    private func waitForChanges(after position: StorePosition, timeout: Duration, _ bot: BotRuntime) async throws {
        let seen = stopSignal.generation
        guard !isStopping else { return }
        let store = self.store
        try await withThrowingTaskGroup(of: Void.self) { race in
            race.addTask { try await self.retrying(bot, "wait") { try await store.waitForChanges(after: position, timeout: timeout) } }
            race.addTask { await self.stopSignal.wait(since: seen, timeout: timeout) }
            try await race.next()
            race.cancelAll()
        }
    }
}
