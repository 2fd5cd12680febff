public import Foundation
public import UsherStore
import UsherEngine
import UsherRules
import Synchronization

/// `run()` passed `Options.shutdownTimeout` after a stop request with work still in flight: that
/// work was cancelled, and is decided again at the next start.
public struct ShutdownDeadline: Error, CustomStringConvertible {
    public var description: String { "the work in flight did not finish within the shutdown timeout" }
}

/// `usher run`: catches up on the store's backlog, then follows new messages; decides each with
/// the engine and commits its effects through the store. Conversations run in parallel, each in
/// order; transient store errors are retried with backoff, any other ends `run()` with it
/// (`StoreHealth`); a stop request finishes the messages in flight.
///
/// Per bot, batches go through two stages: one is read (claiming its conversations) and decided
/// while those before it are written (up to `writesInFlight` at once), their conversations left
/// out of the read. Agent
/// notifications are delivered by one worker of those sharing a store (`dispatchLease`).
public final class Worker: Sendable {
    /// Tuning knobs with sensible defaults.
    public struct Options: Sendable {
        /// Inbound messages read per batch.
        public var batchSize = 512
        /// Conversations decided at the same time.
        public var lanes = 8
        /// Batches being written at the same time: the next batch is read, decided and its
        /// write started while up to this many before it are still on their way (each holds
        /// other conversations). 1 waits for each write before starting the next.
        public var writesInFlight = 2
        /// Decide a whole batch, then write it in one transaction (`ChatStore.commit(batch:)`);
        /// conversations whose commit conflicts fall back to one message at a time.
        public var groupCommit = true
        /// How long a claimed conversation stays this worker's without renewal.
        public var lease: TimeInterval = 30
        /// The bot's cursor moves at most this often, while work flows and when the worker runs
        /// out of work (a move owed then is made once due): moving it costs a few statements,
        /// and a read from the cursor walks the done messages after it.
        public var cursorInterval: Duration = .milliseconds(250)
        /// Reads go on from after the last batch, and go back this often for what they passed
        /// over: other workers' conversations, whose leases may have expired or been released
        /// since. A store that says what its reads passed over (`Intake.passedOver`: PostgreSQL)
        /// is read again from just below the first such message, and not at all when they
        /// passed over none — but from the cursor once in ten intervals whatever they say; any
        /// other store, from the cursor every time. (A message that had to wait for an earlier
        /// one is read again from the cursor at once.)
        public var rescanInterval: Duration = .seconds(1)
        /// How often a worker says it is alive to the others sharing its store (`SharedStore.members`)
        /// and looks who else is: a worker that joins gets its share within about this long. One
        /// silent for twelve of these (3 s: a heartbeat can queue behind a slow statement) counts
        /// as gone, and the others split its share.
        public var memberInterval: Duration = .milliseconds(250)
        /// The longest wait for new messages before looking again.
        public var idleWait: Duration = .milliseconds(500)
        /// First and longest delay between retries of a failing store operation.
        public var retryDelay: Duration = .milliseconds(50)
        public var maxRetryDelay: Duration = .seconds(5)
        /// Log message text (debug only; off by default for privacy).
        public var logText = false
        /// Agent notifications raised within this window in one queue are delivered as one.
        public var notificationWindow: TimeInterval = 10
        /// Queues whose notifications are not delivered.
        public var mutedQueues: Set<String> = []
        /// Where digests go (besides the log).
        public var deliver: (@Sendable (NotificationDigest) -> Void)?
        /// How often the bots' files are looked at for changes, and reloaded when they changed
        /// (nil: only on `reload(force:)`, SIGHUP).
        public var watchInterval: Duration?
        /// Where the store takes messages in itself (`IntakeStore`: stdin), take them in beside
        /// the loops, and stop once the input has ended and everything taken in is decided.
        public var takeIn = false
        /// How long the work in flight may take after a stop request; then it is cancelled and
        /// `run()` throws `ShutdownDeadline` (what was cancelled is decided again at the next start).
        public var shutdownTimeout: Duration?
        public init() {}
    }

    public let store: any ChatStore
    /// The store's tuning, where it has some (`TunableStore`).
    var tunable: (any TunableStore)? { store as? any TunableStore }
    public let bots: [BotRuntime]
    public let workerID: String
    public let options: Options
    public let metrics: Metrics
    public let log: Logger
    /// Wall time: what commits, leases and notifications are stamped with.
    private let clock: @Sendable () -> Date
    /// Monotonic time since an arbitrary start: what the loops schedule by (`Schedule`,
    /// `SharedSchedule`), injectable like `clock`.
    let uptime: @Sendable () -> Duration
    private let stopping = Atomic<Bool>(false)
    /// Notified by `requestStop()`: every wait of the worker's own (pauses, idle waits) ends at
    /// once instead of running out its time.
    let stopSignal = ChangeSignal()
    /// Conversations this worker holds ("bot\0conversation"), and until when (saves claiming them
    /// again each batch).
    let leases = Locked<[String: Date]>([:])
    private let caughtUp = Atomic<Int>(0)
    /// Whether the store calls go through (`retrying`): `/healthz`, `/readyz`, `usher_ready`.
    let health = Locked(StoreHealth())
    /// Each bot's share of its conversations among the workers reading it (`heartbeat`).
    let shares = Locked<[String: Share]>([:])

    public init(store: any ChatStore, bots: [BotRuntime], workerID: String = "worker-\(ProcessInfo.processInfo.processIdentifier)",
                options: Options = .init(), metrics: Metrics = Metrics(), log: Logger = Logger(),
                clock: @escaping @Sendable () -> Date = { Date() }, uptime: (@Sendable () -> Duration)? = nil) {
        let start = ContinuousClock.now
        self.uptime = uptime ?? { ContinuousClock.now - start }
        self.store = store
        self.bots = bots
        self.workerID = workerID
        self.options = options
        self.metrics = metrics
        self.log = log
        self.clock = clock
        for bot in bots {
            metrics.set("usher_rules_last_reload_successful", ["bot": bot.id], to: 1)
            metrics.set("usher_rules_info", ["bot": bot.id, "version": bot.ruleSet.version], to: 1)
        }
        metrics.set("usher_ready", to: 0)
    }

    /// Asks the worker to stop: no new batches are read; messages in flight finish.
    public func requestStop() {
        stopping.store(true, ordering: .relaxed)
        stopSignal.notify()
    }

    public var isStopping: Bool { stopping.load(ordering: .relaxed) }

    /// Whether every bot has caught up with the backlog once (`/readyz` also wants the store
    /// working: `storeStatus`).
    public var isReady: Bool { caughtUp.load(ordering: .relaxed) >= bots.count }

    /// Whether the store calls go through, are being retried, or failed for good.
    public var storeStatus: StoreHealth.Status { health.withLock { $0.status } }

    /// Runs until `requestStop()` (or the task is cancelled); then releases its leases. Throws
    /// the first store error that retrying cannot mend (after stopping the rest), and
    /// `ShutdownDeadline`; a transient error that a stop request cut short is no failure: what
    /// it held is decided again at the next start.
    public func run() async throws {
        log.info("worker-start", ["worker": workerID, "bots": bots.map(\.id).joined(separator: ",")])
        // Said alive first, then warmed up, then who else is looked at again: workers started
        // together have all said so by then, and they read in their shares from the first read
        // (each took every share until it saw the others, and read again from the cursor once
        // it did). Best effort before the second look: a store that is down now is retried by
        // every call that needs it.
        let shared = store as? any SharedStore
        if shared != nil { try? await beat() }
        try? await tunable?.warmUp()
        if shared != nil { try await beat() }
        // The worker's parts, children of one group: each bot's loop, notification delivery,
        // membership, the file watch, the intake — and the shutdown deadline, which ends the
        // group when the others take longer than it after a stop.
        try await withThrowingTaskGroup(of: Part.self) { group in
            var parts = 0
            func start(executor: (any TaskExecutor)? = nil, _ part: @escaping @Sendable () async throws -> Void) {
                parts += 1
                group.addTask(executorPreference: executor) { try await part(); return .done }
            }
            // Each bot's loop reads and decides where the store's calls run (`workerExecutor`).
            for bot in bots {
                start(executor: tunable?.workerExecutor) {
                    if let shared { try await self.follow(bot, shared) } else { try await self.follow(bot) }
                }
            }
            if let notes = store as? any NotificationStore { start { try await self.dispatchNotifications(notes) } }
            if shared != nil { start { try await self.heartbeat() } }
            if let interval = options.watchInterval { start { await self.watchFiles(every: interval) } }
            if options.takeIn, let intake = store as? any IntakeStore { start { try await self.takeIn(intake) } }
            if let timeout = options.shutdownTimeout { group.addTask { await self.deadline(after: timeout) } }
            do {
                while parts > 0, let part = try await group.next() {
                    if part == .deadlinePassed { throw ShutdownDeadline() }
                    parts -= 1
                }
                group.cancelAll()   // the deadline's wait
            } catch {
                // One part failed (or the deadline passed): the others stop too.
                let asked = isStopping
                requestStop()
                group.cancelAll()
                if error is ShutdownDeadline { throw error }
                if health.withLock({ $0.fatal != nil }) {
                    // A part failed for good and stopped the worker: thrown below.
                } else if asked, Self.isTransient(error) || error is CancellationError {
                    log.warning("stopped-while-failing", ["error": "\(error)",
                                                          "note": "the work in flight was let go; it is decided at the next start"])
                } else {
                    // Said on /healthz and /readyz until the process ends.
                    health.withLock { $0.failedForGood(StoreHealth.Failure(bot: "", operation: "run", error: error)) }
                    throw error
                }
            }
        }
        if case let .failed(failure) = storeStatus {
            // A part gave up on a failure retrying cannot mend, and stopped the worker.
            throw StoreError(failure.code, failure.message)
        }
        if let shared {
            for bot in bots {
                try? await shared.release(bot: bot.id, worker: workerID)
                _ = try? await shared.members(group: Self.membersGroup(bot.id), worker: workerID, until: .distantPast)
            }
            try? await shared.release(bot: Self.dispatchLease.bot, worker: workerID)
        }
        log.info("worker-stop", ["worker": workerID])
    }

    /// What a part of `run()` ended with.
    private enum Part: Sendable, Equatable {
        case done
        case deadlinePassed
    }

    /// Returns `.deadlinePassed` once `timeout` has passed after a stop request (and nothing
    /// when cancelled first: the other parts ended in time).
    private func deadline(after timeout: Duration) async -> Part {
        while !isStopping && !Task.isCancelled {
            let seen = stopSignal.generation
            if isStopping { break }
            await stopSignal.wait(since: seen, timeout: .seconds(3600))
        }
        do { try await Task.sleep(for: timeout) } catch { return .done }
        return .deadlinePassed
    }

    /// Looks at the bots' files every `interval` and reloads those that changed, until a stop.
    private func watchFiles(every interval: Duration) async {
        while await !pause(interval), !Task.isCancelled { reload() }
    }

    /// Takes the store's input in until it ends, then waits until every bot has decided all of
    /// it, and asks the worker to stop. A stop request first ends the intake where it is (what it
    /// has not read is taken in at the next start: the input again).
    private func takeIn(_ intake: any IntakeStore) async throws {
        let seen = stopSignal.generation
        let ended: IntakeEnd? = try await withThrowingTaskGroup(of: IntakeEnd?.self) { race in
            race.addTask { try await intake.takeIn() }
            race.addTask {
                while !self.isStopping, !Task.isCancelled { await self.stopSignal.wait(since: seen, timeout: .seconds(3600)) }
                return nil
            }
            defer { race.cancelAll() }
            do {
                return try await race.next()!
            } catch is CancellationError where isStopping {
                return nil
            }
        }
        guard let end = ended else {
            log.info("intake-stopped", ["note": "stopped reading input at a stop request; what was not read yet is taken in "
                                                + "when the same input is given again"])
            return
        }
        log.log(.info, end.event, pairs: end.fields)
        while !isStopping {
            var pending = false
            for bot in bots {
                let position = try await retrying(bot, "position") { try await self.store.position(bot: bot.id) }
                let page = try await retrying(bot, "pending") { try await self.store.pending(bot: bot.id, after: position, limit: 1) }
                if !page.messages.isEmpty { pending = true }
            }
            if isReady && !pending { break }
            if await pause(.milliseconds(20)) { break }
        }
        requestStop()
    }

    /// Reloads every bot whose files changed (or all, on SIGHUP).
    public func reload(force: Bool = false) {
        for bot in bots where force || bot.filesChanged() {
            switch bot.reload() {
            case let .reloaded(version):
                metrics.set("usher_rules_last_reload_successful", ["bot": bot.id], to: 1)
                metrics.set("usher_rules_info", ["bot": bot.id, "version": version], to: 1)
                log.info("rules-reloaded", ["bot": bot.id, "version": version])
            case .unchanged:
                metrics.set("usher_rules_last_reload_successful", ["bot": bot.id], to: 1)
            case let .rejected(why):
                metrics.set("usher_rules_last_reload_successful", ["bot": bot.id], to: 0)
                // Every error's headline (file:line:col: error: [code] …), not the first alone:
                // the first may follow from another (a misspelt key, then a rule without actions).
                let headlines = why.split(separator: "\n").filter { $0.contains(": error: ") }.map(String.init)
                log.error("rules-reload-failed", ["bot": bot.id, "keeping": bot.ruleSet.version, "errors": max(1, headlines.count),
                                                  "error": headlines.isEmpty ? why : headlines.joined(separator: "; "),
                                                  "hint": "usher check \(bot.path) shows each with its source line"])
            }
        }
    }

    // MARK: - Agent notifications

    /// The lease that says which worker delivers agent notifications (`claim` under this "bot",
    /// which no bot id can be: ids are lowercase letters, digits and '-').
    static let dispatchLease = (bot: "usher:notifications", name: "dispatch")

    /// Every `notificationWindow`, merges the notifications raised since the last round and
    /// delivers them (log event `agent-notification`, and `options.deliver`).
    ///
    /// Of the workers sharing a store, the one holding the dispatch lease delivers, so that each
    /// digest goes out once; the others follow along. When it stops, another takes over within
    /// three windows (at once after a clean shutdown, which gives the lease up) and delivers again
    /// what was raised in the last four: at a takeover a ping may come twice, never not at all.
    /// Notifications raised while no worker ran stay in the store (and the inbox) but are not
    /// pinged again.
    private func dispatchNotifications(_ notes: any NotificationStore) async throws {
        let shared = notes as? any SharedStore
        let window = max(0.05, options.notificationWindow)
        var position = try await retrying(bots[0], "notifications") { try await notes.lastNotificationSeq() }
        // Commits written at the same time can make their notifications visible out of order
        // (41 after 42): `position` stays below a gap until it fills or is two windows old (a
        // rolled-back commit), and what was delivered above it is remembered, not sent again.
        var delivered = Set<Int64>()
        var gap: (seq: Int64, since: Date)?
        while !isStopping && !Task.isCancelled {
            if await pause(.milliseconds(Int(window * 1000))) { break }
            let now = clock()
            let lease = Self.dispatchLease
            // Alone on a store without leases: this worker delivers.
            var dispatching = true
            if let shared {
                dispatching = try await retrying(bots[0], "notifications") {
                    try await shared.claim(bot: lease.bot, conversations: [lease.name], worker: self.workerID,
                                           until: now.addingTimeInterval(3 * window))
                }.contains(lease.name)
            }
            let after = position
            let fresh = try await retrying(bots[0], "notifications") {
                try await notes.notifications(after: after, limit: 10_000)
            }
            guard dispatching else {
                // Follow four windows behind: what a dispatching worker that dies now has not
                // delivered yet stays ahead of this position.
                let horizon = now.addingTimeInterval(-4 * window)
                position = fresh.prefix { $0.notification.at < horizon }.last?.seq ?? position
                continue
            }
            let new = fresh.filter { !delivered.contains($0.seq) }
            delivered.formUnion(new.map(\.seq))
            for n in fresh {
                if n.seq != position + 1 {
                    if gap?.seq != position + 1 { gap = (position + 1, now) }
                    if now.timeIntervalSince(gap!.since) < 2 * window { break }
                }
                position = n.seq
            }
            delivered = delivered.filter { $0 > position }
            if new.isEmpty { continue }
            for digest in NotificationDigest.merge(new, window: options.notificationWindow, muted: options.mutedQueues) {
                log.info("agent-notification", ["queue": digest.queue, "conversations": digest.conversations.count,
                                                "text": options.logText ? digest.text : nil])
                options.deliver?(digest)
            }
        }
    }

    // MARK: - Sharing a store

    /// The group (`SharedStore.members`) of the workers reading `bot`'s conversations.
    static func membersGroup(_ bot: String) -> String { Share.group(of: bot) }

    /// Says every `memberInterval` that this worker is alive, and takes each bot's share anew —
    /// every 50 ms in its first eight intervals: workers started together each see only those
    /// that registered before them, and until they agree on the shares they read (and claim)
    /// each other's conversations, which the others then find only at a rescan.
    private func heartbeat() async throws {
        let forming = uptime() + options.memberInterval * 8
        while !isStopping && !Task.isCancelled {
            let interval = uptime() < forming ? min(options.memberInterval, .milliseconds(50)) : options.memberInterval
            if await pause(interval) { break }
            try await beat()
        }
    }

    /// Waits `duration`, or until a stop is requested; whether the worker is stopping.
    private func pause(_ duration: Duration) async -> Bool {
        let seen = stopSignal.generation
        if !isStopping { await stopSignal.wait(since: seen, timeout: duration) }
        return isStopping
    }

    private func beat() async throws {
        guard let shared = store as? any SharedStore else { return }
        let until = clock().addingTimeInterval(12 * options.memberInterval.seconds)
        for bot in bots {
            let members = try await retrying(bot, "members") {
                try await shared.members(group: Self.membersGroup(bot.id), worker: self.workerID, until: until)
            }
            let share = Share(of: workerID, among: members)
            let old = shares.withLock { $0.updateValue(share, forKey: bot.id) }
            if let old, old != share {
                log.info("share", ["bot": bot.id, "worker": workerID, "share": share.description, "workers": members.count])
            }
        }
    }

    // MARK: - The loop of one bot

    /// Said once per bot, the first time its loop runs out of work (`/readyz`).
    func reportCaughtUp(_ bot: BotRuntime, at position: String) {
        caughtUp.add(1, ordering: .relaxed)
        updateReadyGauge()
        log.info("caught-up", ["bot": bot.id, "cursor": position])
    }

    /// `usher_ready`: 1 while `/readyz` would say ready (caught up, the store working).
    private func updateReadyGauge() {
        metrics.set("usher_ready", to: isReady && storeStatus == .working ? 1 : 0)
    }

    /// The next batch: pending messages of conversations this worker holds, claiming those it
    /// does not hold for at least half a lease yet (a claim is a write, and most batches
    /// continue conversations already held), leaving out the conversations of the batch in flight.
    func intake(_ bot: BotRuntime, _ shared: any SharedStore, after cursor: Int64, skipping: [String: Int64], share: Share) async throws -> Intake {
        let now = clock()
        let until = now.addingTimeInterval(options.lease)
        let fresh = now.addingTimeInterval(options.lease / 2)
        let prefix = bot.id + "\u{0}"
        let leases = leases
        let intake = try await retrying(bot, "pending") {
            try await shared.claimPending(bot: bot.id, after: cursor, limit: self.options.batchSize, worker: self.workerID,
                                             until: until, skipping: skipping, share: share,
                                             holds: { c in leases.withLock { ($0[prefix + c] ?? .distantPast) > fresh } })
        }
        leases.withLock { l in
            if l.count > 100_000 { l = l.filter { $0.value > now } }
            for m in intake.messages where (l[prefix + m.conversationID] ?? .distantPast) <= fresh { l[prefix + m.conversationID] = until }
        }
        return intake
    }

    /// A batch of held conversations, grouped, and — with group commit — decided in memory.
    struct Prepared: Sendable {
        var order: [String] = []
        var byConversation: [String: [StoredMessage]] = [:]
        var commits: [Commit] = []
        /// Per commit: its decision and how long it took (for metrics and logs).
        var decisions: [(decision: Decision, seconds: Double)] = []
        var now = Date()
    }

    /// Stage one: groups the batch by conversation; with group commit, reads the states (unless
    /// the read brought them) and decides every message — each conversation's messages in order,
    /// each from the state the previous one left.
    func prepare(_ batch: [StoredMessage], states read: [String: ConversationState]?, _ bot: BotRuntime) async throws -> Prepared {
        var p = Prepared()
        for m in batch {
            if p.byConversation[m.conversationID] == nil { p.order.append(m.conversationID) }
            p.byConversation[m.conversationID, default: []].append(m)
        }
        guard options.groupCommit else { return p }
        let ids = p.order
        var states = read ?? [:]
        if read == nil { states = try await retrying(bot, "states") { try await self.store.states(bot: bot.id, conversations: ids) } }
        p.now = clock()
        let identity = bot.identity   // once: it copies the bot's whole configuration
        for c in p.order {
            var state = states[c]
            for m in p.byConversation[c]! {
                let (decision, seconds) = decide(m, state: state, bot)
                p.commits.append(Commit(bot: identity, inbound: m, expectedVersion: state?.version ?? 0, expectedOwner: state?.owner,
                                        decision: decision, at: p.now))
                p.decisions.append((decision, seconds))
                state = decision.state
            }
        }
        return p
    }

    /// What a write did: whether it committed anything, and whether some conversation of it was
    /// left with a message not committed (out of order, or in conflict 20 times).
    struct Written: Sendable {
        var progress: Bool
        var unfinished: Bool
    }

    /// Stage two: writes a prepared batch — with group commit in one transaction, the
    /// conversations whose commit conflicts then one message at a time; otherwise conversations
    /// in parallel (up to `lanes`), each in order.
    func write(_ p: Prepared, _ bot: BotRuntime) async throws -> Written {
        var mine = p.order
        var committed = false
        if !p.commits.isEmpty {
            let commits = p.commits
            let results = try await retrying(bot, "commit") { try await self.store.commit(batch: commits) }
            var failed = Set<String>()
            // Counted once per result and batch, not once per message.
            var counts: [CommitResult: Int] = [:]
            for result in results { counts[result, default: 0] += 1 }
            for (result, n) in counts { metrics.increment("usher_commits_total", ["bot": bot.id, "result": result.rawValue], by: Double(n)) }
            var tally = Tally()
            defer { flush(tally, bot) }
            // Read in place: a copy of each decision and message would retain every string in them.
            for (i, result) in results.enumerated() {
                switch result {
                case .committed, .silenced:
                    record(p.decisions[i].decision, commits[i].inbound, bot, decideSeconds: p.decisions[i].seconds, now: p.now,
                           said: result == .committed, into: &tally)
                    committed = true
                case .duplicate:
                    committed = true
                case .conflict, .outOfOrder:
                    failed.insert(commits[i].inbound.conversationID)
                }
            }
            mine = mine.filter(failed.contains)
        }
        let (progress, finished) = try await withThrowingTaskGroup(of: (Bool, Bool).self) { group in
            var next = 0
            var progress = false, finished = true
            func start() {
                guard next < mine.count else { return }
                let messages = p.byConversation[mine[next]]!
                next += 1
                group.addTask { try await self.decide(messages, bot) }
            }
            for _ in 0..<min(options.lanes, mine.count) { start() }
            while let (done, all) = try await group.next() {
                progress = progress || done
                finished = finished && all
                start()
            }
            return (progress, finished)
        }
        return Written(progress: committed || progress, unfinished: !finished)
    }


    /// The decision for `m` from `stored` (nil: a new conversation), and how long it took.
    private func decide(_ m: StoredMessage, state stored: ConversationState?, _ bot: BotRuntime) -> (Decision, Double) {
        let ruleSet = bot.ruleSet
        let started = ContinuousClock.now
        var state = stored ?? ConversationState(conversationID: m.conversationID, channel: m.channel, locale: m.locale)
        let decision: Decision
        if !bot.owns(channel: m.channel ?? state.channel, among: bots) {
            // Another bot of this worker answers this conversation: mark it done, unchanged.
            state.version += 1
            decision = Decision(outcome: .ignored("another bot's channel"), effects: [], state: state,
                                ruleSetVersion: ruleSet.version)
        } else if m.kind == .close {
            decision = Decision(outcome: .ignored("conversation closed"), effects: [],
                                state: Engine.closeSession(state), ruleSetVersion: ruleSet.version)
        } else {
            decision = Engine.decide(ruleSet, state, m.message, now: m.at)
        }
        return (decision, (ContinuousClock.now - started).seconds)
    }

    /// Decides one conversation's messages in order; stops at the first that cannot commit yet.
    /// Returns whether any was committed, and whether all were.
    private func decide(_ messages: [StoredMessage], _ bot: BotRuntime) async throws -> (Bool, Bool) {
        var progress = false
        for m in messages {
            switch try await decide(m, bot) {
            case .committed, .silenced, .duplicate: progress = true
            case .outOfOrder, .conflict: return (progress, false)
            }
        }
        return (progress, true)
    }

    private func decide(_ m: StoredMessage, _ bot: BotRuntime) async throws -> CommitResult {
        var attempt = 0
        while true {
            attempt += 1
            let stored = try await retrying(bot, "state") { try await self.store.state(bot: bot.id, conversation: m.conversationID) }
            let (decision, decideSeconds) = decide(m, state: stored, bot)
            let now = clock()
            let commit = Commit(bot: bot.identity, inbound: m, expectedVersion: stored?.version ?? 0, expectedOwner: stored?.owner,
                                decision: decision, at: now)
            let result = try await retrying(bot, "commit") { try await self.store.commit(commit) }
            metrics.increment("usher_commits_total", ["bot": bot.id, "result": result.rawValue])
            switch result {
            case .committed, .silenced:
                record(decision, m, bot, decideSeconds: decideSeconds, now: now, said: result == .committed)
                return result
            case .duplicate, .outOfOrder:
                return result
            case .conflict:
                // Someone else wrote this conversation's state: read it again and decide again.
                if attempt >= 20 { return result }
            }
        }
    }

    /// What a batch's decisions add to the metrics, counted away from the metrics' lock and
    /// applied once per batch (`flush`): per message, a handful of labelled series cost more
    /// than the rest of recording the decision.
    private struct Tally {
        var from: [String: Int] = [:]
        var decisionSeconds: [Double] = []
        var endToEndSeconds: [Double] = []
        /// (metric, label, second label) → count: replies and notices by rule, handoffs by rule
        /// and reason, notifications by queue, regex limit hits by rule, truncated messages.
        var counts: [Count: Int] = [:]

        struct Count: Hashable {
            var name: String
            var label: String
            var second: String = ""
        }

        mutating func add(_ name: String, _ label: String, _ second: String = "") {
            counts[Count(name: name, label: label, second: second), default: 0] += 1
        }
    }

    private func record(_ d: Decision, _ m: StoredMessage, _ bot: BotRuntime, decideSeconds: Double, now: Date, said: Bool) {
        var tally = Tally()
        record(d, m, bot, decideSeconds: decideSeconds, now: now, said: said, into: &tally)
        flush(tally, bot)
    }

    /// Counts and logs what a written commit did. `said`: its replies and notices were written
    /// (`.committed`); not so when the store left them out because an agent wrote after the
    /// message (`.silenced`): then they are neither counted nor logged as sent.
    private func record(_ d: Decision, _ m: StoredMessage, _ bot: BotRuntime, decideSeconds: Double, now: Date, said: Bool,
                        into tally: inout Tally) {
        let b = bot.id
        tally.from[m.kind == .close ? "close" : m.from.rawValue, default: 0] += 1
        tally.decisionSeconds.append(decideSeconds)
        tally.endToEndSeconds.append(max(0, now.timeIntervalSince(m.at)))
        if !said, log.enabled(.info) {
            log.info("silenced", ["bot": b, "conversation": m.conversationID, "message": m.id,
                                  "note": "an agent wrote after this message: its replies and notices were not written"])
        }
        for e in d.effects {
            switch e {
            case let .reply(text, rule, _):
                guard said else { break }
                tally.add("usher_replies_total", rule)
                if log.enabled(.info) {
                    log.info("reply", ["bot": b, "conversation": m.conversationID, "message": m.id, "rule": rule,
                                       "rules_version": d.ruleSetVersion, "text": options.logText ? text : nil])
                }
            case let .system(_, rule):
                guard said else { break }
                tally.add("usher_system_messages_total", rule)
            case let .handoff(reason, queue, _, rule):
                tally.add("usher_handoffs_total", rule, reason)
                if log.enabled(.info) {
                    log.info("handoff", ["bot": b, "conversation": m.conversationID, "message": m.id, "rule": rule,
                                         "reason": reason, "queue": queue, "rules_version": d.ruleSetVersion])
                }
            case let .notify(_, queue, _, _):
                tally.add("usher_notifications_total", queue)
            case .tag, .untag, .set:
                break
            }
        }
        for e in d.events {
            switch e {
            case let .regexLimit(rule, _, limit):
                tally.add("usher_regex_limit_hits_total", rule)
                log.warning("regex-limit", ["bot": b, "rule": rule, "limit": limit, "message": m.id])
            case .truncated:
                tally.add("usher_truncated_messages_total", "")
            }
        }
        if d.budgetExhausted != nil { tally.add("usher_decision_budget_exhausted_total", "") }
        if options.logText { log.debug("decided", ["bot": b, "message": m.id, "text": m.text]) }
    }

    private func flush(_ tally: Tally, _ bot: BotRuntime) {
        let b = bot.id
        for (from, n) in tally.from { metrics.increment("usher_messages_total", ["bot": b, "from": from], by: Double(n)) }
        metrics.observe("usher_decision_seconds", ["bot": b], values: tally.decisionSeconds)
        metrics.observe("usher_end_to_end_seconds", ["bot": b], values: tally.endToEndSeconds)
        for (c, n) in tally.counts {
            let by = Double(n)
            switch c.name {
            case "usher_handoffs_total": metrics.increment(c.name, ["bot": b, "rule": c.label, "reason": c.second], by: by)
            case "usher_notifications_total": metrics.increment(c.name, ["bot": b, "queue": c.label], by: by)
            case "usher_truncated_messages_total", "usher_decision_budget_exhausted_total": metrics.increment(c.name, ["bot": b], by: by)
            default: metrics.increment(c.name, ["bot": b, "rule": c.label], by: by)
            }
        }
    }

    /// Runs a store operation, retrying transient failures with exponential backoff (from
    /// `retryDelay` to `maxRetryDelay`) while the worker is not stopping, and counting errors by
    /// code. The log and the endpoints hear of it through `health`: once when the store starts
    /// failing (and for each new code), once when it works again — never once per retry. Any
    /// other failure is for good: logged as `store-failed`, the worker is asked to stop, and
    /// `run()` throws it, even where the caller lets the error go.
    func retrying<T: Sendable>(_ bot: BotRuntime, _ what: String, _ body: @Sendable () async throws -> T) async throws -> T {
        var delay = options.retryDelay
        var call: Int?
        /// Tells `health` the failing call ended, and logs what that changed.
        func end(succeeded: Bool) {
            guard let call else { return }
            let now = uptime()
            if let change = health.withLock({ $0.ended(call, succeeded: succeeded, now: now) }) { report(change) }
        }
        while true {
            let failure: any Error
            do {
                let value = try await body()
                end(succeeded: true)
                return value
            } catch is CancellationError {
                end(succeeded: false)
                throw CancellationError()
            } catch {
                failure = error
            }
            let failed = StoreHealth.Failure(bot: bot.id, operation: what, error: failure)
            metrics.increment("usher_store_errors_total", ["bot": bot.id, "code": failed.code])
            guard Self.isTransient(failure) else {
                end(succeeded: false)
                failForGood(failed)
                throw failure
            }
            if isStopping {
                end(succeeded: false)
                throw failure
            }
            let id = call ?? health.withLock { $0.begin() }
            call = id
            let now = uptime()
            if let change = health.withLock({ $0.failed(id, failed, now: now) }) { report(change) }
            if await pause(delay) || Task.isCancelled {
                end(succeeded: false)
                if isStopping { throw failure }
                throw CancellationError()
            }
            delay = min(delay * 2, options.maxRetryDelay)
        }
    }

    /// Whether `error` is worth retrying: a transient `StoreError`. Anything else — another
    /// `StoreError`, an error of another kind — trying again cannot mend.
    static func isTransient(_ error: any Error) -> Bool {
        (error as? StoreError)?.isTransient ?? false
    }

    /// Logs a change of the store's health, and keeps `usher_ready` in step with `/readyz`.
    private func report(_ change: StoreHealth.Change) {
        switch change {
        case let .failing(f):
            log.warning("store-error", ["bot": f.bot, "operation": f.operation, "code": f.code, "error": f.message,
                                        "retrying": "with backoff up to \(options.maxRetryDelay); /healthz and /readyz say 503 until it works"])
        case let .recovered(after, failures):
            log.info("store-recovered", ["after": "\(Self.seconds(after))s", "failures": failures])
        }
        updateReadyGauge()
    }

    /// A failure retrying cannot mend: said once, on `/healthz` and `/readyz` too, and the
    /// worker stops; `run()` throws it.
    private func failForGood(_ f: StoreHealth.Failure) {
        let first = health.withLock { h -> Bool in
            defer { h.failedForGood(f) }
            return h.fatal == nil
        }
        guard first else { return }
        log.error("store-failed", ["bot": f.bot, "operation": f.operation, "code": f.code, "error": f.message,
                                   "note": "trying again cannot mend this; the worker stops and usher run exits 1"])
        updateReadyGauge()
        requestStop()
    }

    /// `d` in seconds, to the millisecond.
    static func seconds(_ d: Duration) -> Double {
        (d.seconds * 1000).rounded() / 1000
    }

}

extension BotRuntime {
    /// Who the bot is in what it writes (its running rules' id, name and sender id).
    public var identity: BotIdentity {
        let b = ruleSet.bot
        return BotIdentity(id: b.id, name: b.name, senderID: b.senderId)
    }
}
