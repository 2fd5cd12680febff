public import UsherStore

/// What one bot's worker loop does next on a store with the core contract alone: a value with
/// no I/O, no clock and no tasks of its own, which the loop (`Worker`) asks for an action, runs
/// it, and tells how it went. Tested without a store and without sleeps (ScheduleTests).
///
/// - Reads go on from the end of the last page; their messages are written in batches, up to
///   `writesInFlight` at once, each conversation in at most one batch in flight. A message of a
///   conversation whose batch is in flight waits (`held`) and joins a batch once that is written.
/// - The durable position moves to a page's end once every message of it and of the pages
///   before it is written — at most once per `positionInterval` while work flows, and when the
///   loop runs out of work.
/// - A batch that left a message unwritten (an earlier message of its conversation showed up,
///   or conflicts went on) makes the loop read again from the durable position, once the
///   writes in flight are done: `pending` returns only what is not done, so nothing is lost and
///   nothing written twice.
public struct Schedule: Sendable {
    public struct Options: Sendable {
        public var batchSize: Int
        public var writesInFlight: Int
        public var positionInterval: Duration
        public var idleWait: Duration
        public init(batchSize: Int = 512, writesInFlight: Int = 2, positionInterval: Duration = .milliseconds(250),
                    idleWait: Duration = .milliseconds(500)) {
            self.batchSize = max(1, batchSize)
            self.writesInFlight = max(1, writesInFlight)
            self.positionInterval = positionInterval
            self.idleWait = idleWait
        }
    }

    /// What the loop does next.
    public enum Action: Sendable, Equatable {
        /// Read a page of pending messages after the position.
        case read(after: StorePosition, limit: Int)
        /// Decide these messages (each conversation's in order) and write them; tell
        /// `written(_:unfinished:now:)` with this id when done.
        case write(id: Int, messages: [StoredMessage])
        /// Wait for a write in flight to end.
        case awaitWrite
        /// Save the durable position (`ChatStore.move`); tell `moved(to:now:)`.
        case move(to: StorePosition)
        /// Nothing to do: wait for new messages after the position, at most this long.
        case idle(after: StorePosition, timeout: Duration)
        /// Stopped, and everything in flight written.
        case stopped
    }

    public let options: Options
    /// The durable position as last saved (or read at the start).
    public private(set) var position: StorePosition
    /// Where the next read starts.
    public private(set) var readFrom: StorePosition
    /// Pages read and not yet written through, oldest first: their ends and how many of their
    /// messages are not written yet.
    private var pages: [(end: StorePosition, unwritten: Int)] = []
    /// The index (in all pages read since the last reset) of `pages.first`.
    private var firstPage = 0
    /// Messages to write, each with its page, in read order.
    private var ready: [(message: StoredMessage, page: Int)] = []
    /// Messages of conversations in flight, waiting for their batch to be written.
    private var held: [String: [(message: StoredMessage, page: Int)]] = [:]
    private var heldCount = 0
    /// Batches in flight: their conversations and each message's page.
    private var writes: [Int: (conversations: [String], pages: [Int])] = [:]
    private var inFlight: Set<String> = []
    private var nextWrite = 0
    /// The last read found nothing: wait for changes before reading again.
    private var caughtUp = false
    /// A write left a message unwritten: read again from `position` once the writes are done.
    private var rescanOwed = false
    private var stopping = false
    private var lastMove: Duration
    /// Messages written since the position last moved.
    private var writtenSinceMove = false

    /// Whether the loop has run out of work once (`/readyz`).
    public private(set) var hasCaughtUp = false

    public init(position: StorePosition, options: Options = Options(), now: Duration) {
        self.options = options
        self.position = position
        self.readFrom = position
        self.lastMove = now
    }

    /// How many batches are being written.
    public var writesInFlight: Int { writes.count }

    /// The position every page read so far is written through (nil: none newer than `position`).
    private var writtenThrough: StorePosition? {
        var i = 0
        var end: StorePosition?
        while i < pages.count, pages[i].unwritten == 0 {
            end = pages[i].end
            i += 1
        }
        return end
    }

    /// The next action at time `now`.
    public mutating func next(now: Duration) -> Action {
        if rescanOwed || stopping {
            if !writes.isEmpty { return .awaitWrite }
            if rescanOwed, !stopping {
                rescanOwed = false
                reset()
            }
        }
        if !stopping, writes.count < options.writesInFlight, let batch = takeBatch() { return batch }
        if let move = owedMove(now: now) { return move }
        if stopping { return writes.isEmpty ? .stopped : .awaitWrite }
        // Read ahead while batches are written, but not more than a batch of messages held back.
        if !caughtUp, writes.count < options.writesInFlight, ready.isEmpty, heldCount < options.batchSize {
            return .read(after: readFrom, limit: options.batchSize)
        }
        if !writes.isEmpty { return .awaitWrite }
        return .idle(after: readFrom, timeout: options.idleWait)
    }

    /// What a read of `after` returned.
    public mutating func read(_ page: Page, now: Duration) {
        caughtUp = page.messages.isEmpty
        if caughtUp { hasCaughtUp = true }
        guard !caughtUp || page.end != readFrom else { return }
        // An empty page that went on (past the bot's own messages, or messages done) is written
        // through as soon as the pages before it are.
        if caughtUp { writtenSinceMove = true }
        let index = firstPage + pages.count
        pages.append((page.end, page.messages.count))
        readFrom = page.end
        for m in page.messages {
            if inFlight.contains(m.conversationID) {
                held[m.conversationID, default: []].append((m, index))
                heldCount += 1
            } else {
                ready.append((m, index))
            }
        }
    }

    /// The loop waited (idle) for new messages: read again.
    public mutating func waited() { caughtUp = false }

    /// Batch `id` was written; `unfinished`: some message of it was not.
    public mutating func written(_ id: Int, unfinished: Bool, now: Duration) {
        guard let write = writes.removeValue(forKey: id) else { return }
        for c in write.conversations {
            inFlight.remove(c)
            if let waiting = held.removeValue(forKey: c) {
                ready += waiting
                heldCount -= waiting.count
            }
        }
        if unfinished {
            rescanOwed = true
            return
        }
        for p in write.pages where p >= firstPage { pages[p - firstPage].unwritten -= 1 }
        writtenSinceMove = true
        // New messages may have come while the batch was written.
        caughtUp = false
    }

    /// The position was saved.
    public mutating func moved(to position: StorePosition, now: Duration) {
        self.position = position
        lastMove = now
        // The pages written through it are done.
        while let first = pages.first, first.unwritten == 0 {
            pages.removeFirst()
            firstPage += 1
            if first.end == position { break }
        }
        writtenSinceMove = false
    }

    /// No new reads: finish the writes in flight, save the position, then `.stopped`.
    public mutating func stop() { stopping = true }

    // MARK: -

    /// The next batch from `ready`: messages of conversations not in flight, in read order.
    private mutating func takeBatch() -> Action? {
        guard !ready.isEmpty else { return nil }
        var batch: [StoredMessage] = []
        var pagesOf: [Int] = []
        var conversations: [String] = []
        var taken = Set<String>()
        var rest: [(message: StoredMessage, page: Int)] = []
        for entry in ready {
            let c = entry.message.conversationID
            if inFlight.contains(c) {
                held[c, default: []].append(entry)
                heldCount += 1
            } else if batch.count < options.batchSize || taken.contains(c) {
                if taken.insert(c).inserted { conversations.append(c) }
                batch.append(entry.message)
                pagesOf.append(entry.page)
            } else {
                rest.append(entry)
            }
        }
        ready = rest
        guard !batch.isEmpty else { return nil }
        let id = nextWrite
        nextWrite += 1
        writes[id] = (conversations, pagesOf)
        inFlight.formUnion(conversations)
        return .write(id: id, messages: batch)
    }

    /// A move owed: pages written through past `position`, and the interval passed (or nothing
    /// else to do, or stopping).
    private mutating func owedMove(now: Duration) -> Action? {
        guard writtenSinceMove, let through = writtenThrough, through != position else { return nil }
        let idle = caughtUp && ready.isEmpty && writes.isEmpty
        guard stopping || idle || now - lastMove >= options.positionInterval else { return nil }
        return .move(to: through)
    }

    /// Forgets what was read: the next read starts at the durable position again.
    private mutating func reset() {
        pages.removeAll()
        firstPage = 0
        ready.removeAll()
        held.removeAll()
        heldCount = 0
        readFrom = position
        caughtUp = false
    }
}
