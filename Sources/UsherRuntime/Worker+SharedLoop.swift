import Foundation
import UsherStore

extension Worker {
    /// What a child of a bot's shared loop did.
    private enum Child: Sendable {
        case written(Int, Written)
        case moved(Int64)
        case reported
    }

    /// The loop of one bot on a store that workers share (`SharedStore`): `SharedSchedule`
    /// decides what to do next, this runs it. Writes, cursor moves and progress reports run as
    /// children of one task group, which the loop waits for when the schedule says so; each
    /// child notifies `childEnded` as it ends, so that a wait for a new message also ends when
    /// a child does.
    func follow(_ bot: BotRuntime, _ shared: any SharedStore) async throws {
        let signalling = shared as? any SignallingStore
        let executor = tunable?.workerExecutor
        let cursor = try await retrying(bot, "cursor") { try await shared.cursor(bot: bot.id) }
        var schedule = SharedSchedule(
            cursor: cursor, share: currentShare(bot),
            options: .init(batchSize: options.batchSize, writesInFlight: options.writesInFlight, cursorInterval: options.cursorInterval,
                           rescanInterval: options.rescanInterval, memberInterval: options.memberInterval, idleWait: options.idleWait),
            now: uptime())
        var reportedReady = false
        var prepared: [Int: Prepared] = [:]
        let childEnded = ChangeSignal()
        var collected: UInt64 = 0
        let workerID = workerID
        try await withThrowingTaskGroup(of: Child.self) { children in
            /// Waits for the next child and tells the schedule what it did.
            func collect() async throws {
                guard let child = try await children.next() else {
                    preconditionFailure("the schedule waits for a child, and none runs")
                }
                collected += 1
                switch child {
                case let .written(id, done):
                    schedule.written(id, progress: done.progress, unfinished: done.unfinished, now: uptime())
                case let .moved(cursor):
                    schedule.moved(to: cursor, now: uptime())
                case .reported:
                    schedule.reported()
                }
            }
            do {
                while true {
                    let stopSeen = stopSignal.generation
                    if isStopping || Task.isCancelled { schedule.stop() }
                    let rescans = schedule.takeRescans()
                    if rescans > 0 { metrics.increment("usher_rescans_total", ["bot": bot.id], by: Double(rescans)) }
                    switch schedule.next(now: uptime(), share: currentShare(bot)) {
                    case let .release(keeping):
                        try await release(bot, shared, keeping: keeping)
                    case let .read(after, skipping, share, unlessCovered):
                        let generation = signalling?.changeSignal?.generation
                        if let covered = unlessCovered, signalling?.notified(since: covered.since)?.covered(by: covered.through) == true {
                            schedule.readSkipped(generation: generation, now: uptime())
                        } else {
                            let read = try await intake(bot, shared, after: after, skipping: skipping, share: share)
                            schedule.read(read, generation: generation, now: uptime())
                        }
                    case let .readAgain(after, share):
                        let latest = try await retrying(bot, "latest") { try await shared.latestSeq() }
                        let read = try await intake(bot, shared, after: after, skipping: [:], share: share)
                        schedule.readAgain(read, latest: latest, now: uptime())
                    case let .prepare(id, messages, states):
                        prepared[id] = try await prepare(messages, states: states, bot)
                        schedule.prepared(id)
                    case let .write(id):
                        let batch = prepared.removeValue(forKey: id)!
                        children.addTask(executorPreference: executor) {
                            defer { childEnded.notify() }
                            return .written(id, try await self.write(batch, bot))
                        }
                    case let .report(safe, share):
                        children.addTask {
                            defer { childEnded.notify() }
                            try? await shared.progress(bot: bot.id, worker: workerID, share: share, safe: safe)
                            return .reported
                        }
                    case let .move(mover, safe, share):
                        children.addTask {
                            defer { childEnded.notify() }
                            let cursor = try? await self.retrying(bot, "advance-cursor") { () async throws -> Int64 in
                                try await shared.progress(bot: bot.id, worker: workerID, share: share, safe: safe)
                                if mover { try await shared.advanceCursor(bot: bot.id) }
                                return try await shared.cursor(bot: bot.id)
                            }
                            return .moved(cursor ?? -1)
                        }
                    case .awaitChild:
                        try await collect()
                    case let .awaitSignalOrChild(generation, timeout):
                        // A new message (read it at once, else it would wait for a whole commit
                        // before its read), a child's end, or a stop: whichever comes first.
                        var waits: [(signal: ChangeSignal, since: UInt64)] = [(childEnded, collected), (stopSignal, stopSeen)]
                        if let signal = signalling?.changeSignal, let generation { waits.append((signal, generation)) }
                        let woke = await ChangeSignal.first(of: waits, timeout: timeout)
                        if woke == 0 || woke == nil { try await collect() } else { schedule.signalled() }
                    case let .waitForChanges(after, timeout):
                        try await retrying(bot, "wait") { try await shared.waitForChanges(after: after, timeout: timeout) }
                    case let .idle(after, timeout, signalGeneration):
                        if !reportedReady, schedule.hasCaughtUp {
                            reportedReady = true
                            reportCaughtUp(bot, at: "\(schedule.cursor)")
                        }
                        if let signalGeneration, let signal = signalling?.changeSignal {
                            // Nothing new was signalled: wait for the next signal (or a stop).
                            _ = await ChangeSignal.first(of: [(signal, signalGeneration), (stopSignal, stopSeen)], timeout: timeout)
                        } else {
                            try await waitUnlessStopped(timeout: timeout, bot) { try await shared.waitForChanges(after: after, timeout: timeout) }
                        }
                    case .stopped:
                        return
                    }
                }
            } catch {
                // Whatever was in flight finishes (or fails) before the error goes up.
                while !children.isEmpty { _ = try? await children.next() }
                throw error
            }
        }
    }

    /// This worker's share of `bot`'s conversations as its heartbeat last took it.
    private func currentShare(_ bot: BotRuntime) -> Share {
        shares.withLock { $0[bot.id] } ?? .all
    }

    /// Gives up the leases of `bot`'s conversations but `keeping`.
    private func release(_ bot: BotRuntime, _ shared: any SharedStore, keeping: Set<String>) async throws {
        try await retrying(bot, "release") { try await shared.release(bot: bot.id, worker: self.workerID, keeping: keeping) }
        let prefix = bot.id + "\u{0}"
        leases.withLock { l in l = l.filter { !$0.key.hasPrefix(prefix) || keeping.contains(String($0.key.dropFirst(prefix.count))) } }
    }
}
