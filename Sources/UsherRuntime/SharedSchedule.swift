public import UsherEngine
public import UsherStore

/// What one bot's loop does next on a store that workers share (`SharedStore`): a value with no
/// I/O, no clock and no tasks of its own. The loop (`Worker.follow(_:_:)`) asks it for an action,
/// runs it, and tells it what came of it; the children the loop starts (writes, cursor moves,
/// progress reports) report back through `written`, `moved` and `reported`, in any order.
/// Tested step by step without a store or sleeps (SharedScheduleTests).
///
/// How it reads:
/// - A read claims the pending messages of this worker's share after where the reads stand,
///   leaving out the conversations in flight (`skipping`). Reads go on from after the last
///   batch (`floor`); what they passed over below it — other workers' conversations — is read
///   again every `rescanInterval`, from just below the first such message (`Intake.passedOver`)
///   or from the cursor once in ten intervals; a write that left a message unfinished (an
///   earlier one of its conversation showed up) sends the reads back to the cursor at once.
/// - Where the store's signals say no message arrived since the last read that the reads have
///   not covered, the read is skipped (`.read`'s `unlessCovered`).
/// - An empty read with writes in flight waits for a new message or a write's end; an empty
///   read with none looks once more (after the newest sequence number: the wait then starts
///   after the bot's own replies) and then idles.
/// - A batch is decided (`.prepare`) while up to `writesInFlight` batches before it are written;
///   its conversations are in flight from the moment it is read.
///
/// How the shared cursor moves: workers of a bot share one cursor, and a move walks every
/// message since the last. While work flows the first worker of the share moves it at most once
/// per `cursorInterval`, in the background; the others read where it is, and move it only when
/// it has not moved for four intervals. Each moves it when it runs out of work with a move owed.
/// Before each move, and at most every `reportInterval` after a write (only among others), the
/// worker says where its reads stand (`SharedStore.progress`): every message of its share at or
/// below `safe` is done.
public struct SharedSchedule: Sendable {
    public struct Options: Sendable {
        public var batchSize: Int
        public var writesInFlight: Int
        public var cursorInterval: Duration
        public var rescanInterval: Duration
        public var memberInterval: Duration
        public var idleWait: Duration
        public var reportInterval: Duration
        public init(batchSize: Int = 512, writesInFlight: Int = 2, cursorInterval: Duration = .milliseconds(250),
                    rescanInterval: Duration = .seconds(1), memberInterval: Duration = .milliseconds(250),
                    idleWait: Duration = .milliseconds(500), reportInterval: Duration = .milliseconds(100)) {
            self.batchSize = max(1, batchSize)
            self.writesInFlight = max(1, writesInFlight)
            self.cursorInterval = cursorInterval
            self.rescanInterval = rescanInterval
            self.memberInterval = memberInterval
            self.idleWait = idleWait
            self.reportInterval = reportInterval
        }
    }

    public enum Action: Sendable, Equatable {
        /// Give up the leases of this bot's conversations but `keeping`.
        case release(keeping: Set<String>)
        /// Claim and read the next batch after `after` in `share`, leaving out `skipping`; tell
        /// `read(_:generation:now:)`. Unless `unlessCovered` is given and the store's signals
        /// since that generation name no message above its seq (`Notified.covered(by:)`): then
        /// tell `readSkipped(generation:now:)` instead.
        case read(after: Int64, skipping: [String: Int64], share: Share, unlessCovered: Covered?)
        /// Read the store's newest sequence number, then the next batch again with nothing left
        /// out; tell `readAgain(_:latest:now:)`.
        case readAgain(after: Int64, share: Share)
        /// Decide batch `id` (its states, where the read brought them); tell `prepared(_:)`.
        case prepare(id: Int, messages: [StoredMessage], states: [String: ConversationState]?)
        /// Start writing prepared batch `id` as a child.
        case write(id: Int)
        /// Start saying where the reads stand as a child; tell `reported()` when it ends.
        case report(safe: Int64?, share: Share)
        /// Start a cursor move as a child — say where the reads stand, move the cursor if
        /// `mover`, then read where it is; tell `moved(to:now:)` (-1: it failed).
        case move(mover: Bool, safe: Int64?, share: Share)
        /// Wait for a child to end, and tell what it did.
        case awaitChild
        /// Wait until a new message is signalled (after `generation`) or a child ends, at most
        /// `timeout`; tell `signalled()` for the first, or the child's result.
        case awaitSignalOrChild(generation: UInt64?, timeout: Duration)
        /// A write committed nothing (all it held waits on an earlier message): wait for the
        /// store to change after `after`, at most `timeout`, instead of spinning.
        case waitForChanges(after: Int64, timeout: Duration)
        /// Caught up: wait for new messages after `after` (or, `signalGeneration` given, for the
        /// store's next signal), at most `timeout`.
        case idle(after: Int64, timeout: Duration, signalGeneration: UInt64?)
        /// Stopped: every write and move done.
        case stopped
    }

    /// The skip check of a read: the generation of the store's signal when the last read began,
    /// and the seq the reads have covered.
    public struct Covered: Sendable, Equatable {
        public var since: UInt64
        public var through: Int64
        public init(since: UInt64, through: Int64) {
            self.since = since
            self.through = through
        }
    }

    /// Where the loop is within one round.
    private enum Phase: Equatable {
        /// About to read (after the share and rescan checks).
        case top
        /// An empty read with writes in flight: waiting for a signal or a write.
        case emptyWithWrites(generation: UInt64?)
        /// A write committed nothing: wait for changes, then go on.
        case stalled
        /// An empty read, nothing in flight: read once more.
        case lookAgain
        /// Nothing to do: move the cursor if owed, then idle.
        case idle(Idle)
        /// Moving the cursor before idling (`then`) or stopping (nil): first the move in
        /// flight, then one more.
        case advancing(started: Bool, then: Idle?)
        /// A batch read: decide it, then write it once a slot is free.
        case batch(id: Int, prepared: Bool)
    }

    /// How to idle: on the store's signal alone (the read was skipped), or on the store's
    /// changes after the newest seq read before the last look.
    private struct Idle: Equatable {
        var skipped: Bool
        var latest: Int64
        var generation: UInt64?
    }

    public let options: Options
    private var phase = Phase.top

    /// The bot's cursor as this worker last read it (never wrong when older, only slower).
    public private(set) var cursor: Int64
    /// Where the reads go on (0: from `rescanFrom`, or the cursor).
    private var floor: Int64 = 0
    /// Where a read with `floor` 0 starts (0: the cursor).
    private var rescanFrom: Int64 = 0
    /// The first message the reads passed over since the last rescan (0: look from the cursor;
    /// nil: none).
    private var passedOver: Int64?
    private var fromCursor: Duration
    private var rescanned: Duration
    /// The store's signal generation when the last read began (`SignallingStore.notified`).
    private var lastRead: UInt64?
    private var lastSeen: Int64 = 0
    private var instant = false

    public private(set) var share = Share.all
    /// Writes in flight when the share last changed: once written, the leases go too.
    private var releaseOnceWritten = 0
    private var releaseOwed = false

    /// Batches in flight: their conversations and lowest seq.
    private var writes: [Int: (conversations: [String], low: Int64)] = [:]
    private var nextID = 0
    /// Each conversation in flight, with the seq its batch was read through.
    public private(set) var inFlight: [String: Int64] = [:]
    /// The lowest seq of the batch read and not yet written.
    private var taken: Int64?
    private var batchConversations: [String] = []

    private var moving = false
    private var advanced: Duration
    private var cursorMoved: Duration
    private var committedSinceAdvance = false
    private var moveOwed: Bool?
    private var reporting = false
    private var lastReport: Duration
    private var reportOwed = false

    private var stopping = false
    /// Whether the loop has run out of work once (`/readyz`).
    public private(set) var hasCaughtUp = false
    /// Rescans since `takeRescans()` last asked (`usher_rescans_total`).
    private var rescans = 0

    public init(cursor: Int64, share: Share, options: Options = Options(), now: Duration) {
        self.options = options
        self.cursor = cursor
        self.share = share
        fromCursor = now
        rescanned = now
        advanced = now
        cursorMoved = now
        lastReport = now - .seconds(1)
    }

    /// How many batches are being written.
    public var writesInFlight: Int { writes.count }

    /// Finish what is in flight (and a cursor move owed), then `.stopped`; no new reads.
    public mutating func stop() { stopping = true }

    /// Rescans since the last call.
    public mutating func takeRescans() -> Int {
        defer { rescans = 0 }
        return rescans
    }

    // MARK: - The next action

    /// The next action at `now`; `share` is this worker's share as its heartbeat last took it.
    public mutating func next(now: Duration, share current: Share) -> Action {
        // What the children's ends made owed goes first: a release, a report, a move.
        if releaseOwed {
            releaseOwed = false
            return .release(keeping: Set(inFlight.keys))
        }
        if reportOwed {
            reportOwed = false
            reporting = true
            return .report(safe: safe(), share: share)
        }
        if let mover = moveOwed {
            moveOwed = nil
            return startMove(mover: mover, now: now)
        }
        switch phase {
        case .top:
            return top(now: now, share: current)
        case let .emptyWithWrites(generation):
            return .awaitSignalOrChild(generation: generation, timeout: options.idleWait)
        case .stalled:
            phase = .top
            return .waitForChanges(after: lastSeen, timeout: .milliseconds(50))
        case .lookAgain:
            return .readAgain(after: readFrom, share: share)
        case let .idle(idle):
            // The cursor only saves reading done messages again: move it when idle, at most
            // once per `cursorInterval`; a move owed waits no longer.
            var wait = options.idleWait
            if committedSinceAdvance {
                let due = options.cursorInterval - (now - advanced)
                if due <= .zero {
                    phase = .advancing(started: false, then: idle)
                    return next(now: now, share: current)
                }
                wait = min(wait, due)
            }
            return self.idle(idle, timeout: wait)
        case let .advancing(started, then):
            if moving { return .awaitChild }
            if !started {
                phase = .advancing(started: true, then: then)
                return startMove(mover: true, now: now)
            }
            // Moved: idle (or stop) without another move.
            if let then { return idle(then, timeout: options.idleWait) }
            return .stopped
        case let .batch(id, prepared):
            if !prepared, let p = preparing {
                preparing = nil
                return .prepare(id: id, messages: p.messages, states: p.states)
            }
            if writes.count >= options.writesInFlight { return .awaitChild }
            writes[id] = (batchConversations, taken ?? lastSeen)
            taken = nil
            batchConversations = []
            phase = .top
            return .write(id: id)
        }
    }

    private mutating func idle(_ idle: Idle, timeout: Duration) -> Action {
        hasCaughtUp = true
        phase = .top
        return .idle(after: max(lastSeen, cursor, idle.latest), timeout: timeout,
                     signalGeneration: idle.skipped ? idle.generation : nil)
    }

    private mutating func top(now: Duration, share current: Share) -> Action {
        if stopping {
            if !writes.isEmpty { return .awaitChild }
            if committedSinceAdvance {
                phase = .advancing(started: false, then: nil)
                return next(now: now, share: current)
            }
            return moving ? .awaitChild : .stopped
        }
        if current != share {
            // Workers came or went. What this worker holds goes at once to whoever's share it
            // is now (its own, it claims again); what it is writing, once written. And the reads
            // go back to the cursor — again two member intervals on, when the others have let
            // go of what is now this worker's (else it would wait for the next rescan, holding
            // the shared cursor back).
            share = current
            releaseOnceWritten = writes.count
            rescan(now: now)
            rescanned = now - options.rescanInterval + min(options.rescanInterval, options.memberInterval * 2)
            return .release(keeping: Set(inFlight.keys))
        }
        if now - rescanned >= options.rescanInterval {
            rescanned = now
            if now - fromCursor >= options.rescanInterval * 10 { passedOver = 0 }
            if let first = passedOver {
                rescan(from: max(0, first - 1), now: now)
                passedOver = nil
                rescans += 1
            }
        }
        // After an intake the store answered without the database, a batch taken now would
        // only wait for a write to end: wait first, so the messages that come meanwhile join it.
        if instant, writes.count >= options.writesInFlight { return .awaitChild }
        let covered = floor > 0 ? lastRead.map { Covered(since: $0, through: floor) } : nil
        return .read(after: readFrom, skipping: inFlight, share: share, unlessCovered: covered)
    }

    // MARK: - What the loop tells

    /// What `.read` returned; `generation`: the store's signal generation when it began.
    public mutating func read(_ intake: Intake, generation: UInt64?, now: Duration) {
        lastRead = generation
        passedOver = Self.lower(passedOver, intake.passedOver)
        guard intake.messages.isEmpty else { return take(intake) }
        if !writes.isEmpty {
            phase = .emptyWithWrites(generation: generation)
        } else {
            phase = .lookAgain
            pendingGeneration = generation
        }
    }

    /// The read was skipped: the store signalled nothing the reads have not covered.
    public mutating func readSkipped(generation: UInt64?, now: Duration) {
        phase = writes.isEmpty ? .idle(Idle(skipped: true, latest: 0, generation: generation)) : .emptyWithWrites(generation: generation)
    }

    /// The generation of the empty read before a `.readAgain`, for the idle after it.
    private var pendingGeneration: UInt64?

    /// What `.readAgain` returned, and the newest seq read before it.
    public mutating func readAgain(_ intake: Intake, latest: Int64, now: Duration) {
        passedOver = Self.lower(passedOver, intake.passedOver)
        if intake.messages.isEmpty {
            phase = .idle(Idle(skipped: false, latest: latest, generation: pendingGeneration))
        } else {
            take(intake)
        }
    }

    /// `.awaitSignalOrChild` woke for a new message: read.
    public mutating func signalled() { phase = .top }

    /// `.prepare` is done.
    public mutating func prepared(_ id: Int) {
        if case .batch(id, false) = phase { phase = .batch(id: id, prepared: true) }
    }

    /// Batch `id` was written: whether it committed anything, and whether it left a message
    /// unfinished.
    public mutating func written(_ id: Int, progress: Bool, unfinished: Bool, now: Duration) {
        guard let write = writes.removeValue(forKey: id) else { return }
        for c in write.conversations { inFlight[c] = nil }
        // A message that could not be committed yet (an earlier one of its conversation
        // showed up meanwhile) is below where the reads go on: read from the cursor again.
        if unfinished { rescan(now: now) }
        if releaseOnceWritten > 0 {
            releaseOnceWritten -= 1
            if releaseOnceWritten == 0 { releaseOwed = true }
        }
        committedSinceAdvance = committedSinceAdvance || progress
        if share.count > 1, now - lastReport >= options.reportInterval, !reporting {
            lastReport = now
            reportOwed = true
        }
        if committedSinceAdvance, now - advanced >= options.cursorInterval, !moving {
            // The first worker moves it; the others too when it has not moved for four
            // intervals, in case the first has nothing to commit.
            moveOwed = share.index == 0 || now - cursorMoved >= options.cursorInterval * 4
        }
        if case .emptyWithWrites = phase { phase = progress ? .top : .stalled }
    }

    /// A progress report ended.
    public mutating func reported() { reporting = false }

    /// A cursor move ended with the cursor at `cursor` (-1: it failed).
    public mutating func moved(to cursor: Int64, now: Duration) {
        moving = false
        if cursor > self.cursor { cursorMoved = now }
        if cursor >= 0 { self.cursor = max(self.cursor, cursor) }
    }

    // MARK: -

    /// Where the next read starts.
    private var readFrom: Int64 { max(cursor, floor > 0 ? floor : rescanFrom) }

    /// Every message of this worker's share at or below this is done (nil: not known now).
    /// Below `floor` a message was done, passed over (then it is at or above `passedOver`) or
    /// read (then it is in a batch read or written, at or above its lowest); nil after a share
    /// change or an unfinished write, until the reads from the cursor are under way again.
    private func safe() -> Int64? {
        var s: Int64
        if floor > 0 { s = floor } else if rescanFrom > 0 { s = rescanFrom } else { return nil }
        if let first = passedOver {
            if first == 0 { return nil }
            s = min(s, first - 1)
        }
        if let taken { s = min(s, taken - 1) }
        for w in writes.values { s = min(s, w.low - 1) }
        return s
    }

    private mutating func take(_ intake: Intake) {
        let batch = intake.messages
        instant = intake.instant
        lastSeen = max(lastSeen, batch.last!.seq)
        taken = batch.first!.seq
        floor = intake.readThrough
        // Each conversation's messages up to its last in the batch are in flight: the read
        // returned every one it saw in its range.
        var seen = Set<String>()
        batchConversations = []
        for m in batch {
            inFlight[m.conversationID] = m.seq
            if seen.insert(m.conversationID).inserted { batchConversations.append(m.conversationID) }
        }
        phase = .batch(id: nextID, prepared: false)
        nextID += 1
        preparing = (batch, intake.states)
    }

    /// The batch just read, until it is handed out as `.prepare`.
    private var preparing: (messages: [StoredMessage], states: [String: ConversationState]?)?

    private mutating func startMove(mover: Bool, now: Duration) -> Action {
        moving = true
        advanced = now
        if mover {
            cursorMoved = now
            committedSinceAdvance = false   // a worker that only read the cursor still owes a move
        }
        return .move(mover: mover, safe: safe(), share: share)
    }

    private mutating func rescan(from seq: Int64 = 0, now: Duration) {
        floor = 0
        rescanFrom = seq
        if seq == 0 { fromCursor = now }
    }

    /// The lower of two optional seqs (nil: none).
    static func lower(_ a: Int64?, _ b: Int64?) -> Int64? {
        guard let a else { return b }
        guard let b else { return a }
        return min(a, b)
    }
}
