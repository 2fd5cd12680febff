public import Foundation
public import UsherEngine
public import UsherStore
import Synchronization
import UsherHTTP
import UsherJSON

/// The Firestore store (`--store firestore://PROJECT`, docs/store-firestore.md): Usher answers
/// the customer messages an app writes to Firestore, in the app's own documents
/// (`FirestoreLayout`, the seed's data model by default), over the REST API v1.
///
/// - Intake: a collection-group query over the messages, ordered by (time, document name),
///   after the position; and, every `sweepInterval` and on a read that starts behind the
///   furthest read (the worker reading again), a sweep of the `lookback` behind it for messages
///   written late with an earlier time (a phone that was offline) or left by a worker that died.
///   Which messages are done is kept in each conversation's state document (`done`: the ids
///   done within the look-back of the newest).
/// - Commit: one atomic `commit` per inbound message — its replies and notices created with
///   deterministic ids (`exists: false`), its state and the conversation's fields written under
///   `updateTime` preconditions, `messageCount` incremented by the server. A retry of a commit
///   that landed finds its message done (`.duplicate`); a precondition that failed means "read
///   again" (`.conflict`, or written on the fresh read when nothing the decision used changed).
/// - Workers share conversations through lease documents; each reads everything and takes the
///   conversations it holds or can claim.
public final class FirestoreStore: ChatStore, BackendStore, Sendable {
    let rest: FirestoreREST
    public let layout: FirestoreLayout
    /// This process's name in lease documents.
    public let worker: String
    let options: Options
    let memory = Mutex(Memory())

    public struct Options: Sendable {
        /// How long a claimed conversation stays this worker's without being renewed.
        public var lease: Duration = .seconds(10)
        /// How often a read also sweeps the look-back for late messages.
        public var sweepInterval: Duration = .seconds(5)
        /// Polling while waiting for changes: from `minPoll` after activity, doubling to `maxPoll`.
        public var minPoll: Duration = .milliseconds(10)
        public var maxPoll: Duration = .milliseconds(500)
        /// Whether this store is a worker's, taking part in the lease documents: reads then
        /// return only conversations it holds or can claim. Off for the CLI's reads (`usher send
        /// --wait` asking what is pending must not claim what the worker is to answer).
        public var leases = true
        /// Where a bot with no position starts (`usher run --from`); nil: at the start, and no
        /// position is written (the CLI's reads).
        public var start: StartPosition?
        public init() {}
    }

    /// What this process remembers between calls.
    struct Memory {
        /// Conversations this worker holds, until when.
        var leases: [String: Date] = [:]
        /// Per bot: the furthest position read (a read before it is the worker reading again).
        var furthest: [String: Position] = [:]
        var lastSweep: [String: ContinuousClock.Instant] = [:]
        /// Per bot and conversation: the documents read with the last page (for `states` and
        /// the commit's preconditions).
        var read: [String: Snapshot] = [:]
        /// When the last message was seen (polling goes fast after activity).
        var lastActivity = ContinuousClock.now
        /// Per bot: the messages the intake read, for the commits' checks (`Known`).
        var known: [String: Known] = [:]
        /// Per bot: where it started (`since` in its document), below which nothing is read.
        var since: [String: Position] = [:]

        /// Keeps a read of a conversation's documents, each unless what is kept is newer: a
        /// read that started before a commit of this process and ended after it must not put
        /// the documents as they were before it back (the next commit would find its
        /// conversation's earlier message not done).
        mutating func keep(_ s: Snapshot, for key: String) {
            guard let old = read[key] else { read[key] = s; return }
            var merged = s
            if Snapshot.isNewer(old.state, than: s.state) { merged.state = old.state }
            if Snapshot.isNewer(old.conversation, than: s.conversation) { merged.conversation = old.conversation }
            read[key] = merged
        }
    }

    /// A conversation's two documents as read: Usher's state and the app's conversation.
    struct Snapshot: Sendable {
        var state: FirestoreDocument?
        var conversation: FirestoreDocument?
        /// When it was read (or written): `states` takes it for 2 s, then reads again.
        var at = ContinuousClock.now

        /// Whether `a` was written after `b`. A document kept against a read that did not find
        /// it counts as newer (the read began before its creation); were it deleted since, the
        /// commit's precondition fails and its second try reads afresh.
        static func isNewer(_ a: FirestoreDocument?, than b: FirestoreDocument?) -> Bool {
            guard let a else { return false }
            guard let b else { return true }
            guard let ta = FirestoreTime.parse(a.updateTime), let tb = FirestoreTime.parse(b.updateTime) else { return false }
            return ta > tb
        }
    }

    init(rest: FirestoreREST, layout: FirestoreLayout, worker: String, options: Options = Options()) {
        self.rest = rest
        self.layout = layout
        self.worker = worker
        self.options = options
    }

    /// The REST calls this store has made, by method (`runQuery`, `commit`, `batchGet`, ...).
    public var requestCounts: [String: Int] { rest.calls.withLock { $0 } }

    /// Gives up this worker's leases (another worker takes its conversations at once rather
    /// than when the leases expire), then closes the connections.
    public func close() async throws {
        let held = memory.withLock { m in defer { m.leases = [:] }; return Array(m.leases.keys) }
        if !held.isEmpty {
            let names = held.map { key in
                let slash = key.firstIndex(of: "/")!
                return rest.name(leasePath(String(key[..<slash]), String(key[key.index(after: slash)...])))
            }
            if let docs = try? await rest.batchGet(names) {
                let mine = docs.compactMap { $0 }.filter { $0.fields["worker"]?.string == worker }
                _ = try? await rest.batchWrite(mine.map { FirestoreWrite(operation: .delete(name: $0.name), precondition: .updateTime($0.updateTime)) })
            }
        }
        rest.http.close()
    }

    // MARK: Paths

    func conversationPath(_ id: String) -> String { layout.conversations + "/" + id }
    func messagesParent(_ conversation: String) -> String { conversationPath(conversation) }
    func botPath(_ bot: String) -> String { layout.usherCollection + "/" + Self.documentID(bot) }
    func statePath(_ bot: String, _ conversation: String) -> String { botPath(bot) + "/states/" + conversation }
    func leasePath(_ bot: String, _ conversation: String) -> String { botPath(bot) + "/leases/" + conversation }

    /// A document id from any text: `/` is not allowed in one.
    static func documentID(_ text: String) -> String {
        text.contains("/") ? text.replacingOccurrences(of: "/", with: "%2F") : text
    }

    /// The deterministic id of an outgoing message: the same decision writes the same document.
    static func outgoingID(_ key: String) -> String {
        "usher-" + documentID(key.replacingOccurrences(of: ":", with: "-"))
    }

    // MARK: Positions

    /// A place in the (time, document name) order.
    struct Position: Sendable, Comparable {
        var time: FirestoreValue
        var date: Date
        var name: String
        /// When the document was written (the server's clock), where known: among messages of
        /// the same time, the order they came in (`arrivedBefore`); the cursor uses the name.
        var created: Date? = nil

        static func < (a: Position, b: Position) -> Bool { a.date != b.date ? a.date < b.date : a.name < b.name }
        static func == (a: Position, b: Position) -> Bool { a.date == b.date && a.name == b.name }

        /// Whether `self` comes before `other` in a conversation: an earlier time, or the same
        /// time and written first (two messages of one instant are answered in the order they came).
        func arrivedBefore(_ other: Position) -> Bool {
            guard date == other.date else { return date < other.date }
            if let a = created, let b = other.created, a != b { return a < b }
            return name < other.name
        }
    }

    func token(_ p: Position) -> StorePosition {
        let time: String
        switch p.time {
        case let .timestamp(t): time = t
        case let .double(d): time = "\(d)"
        case let .integer(i): time = "\(i)"
        default: time = FirestoreTime.format(p.date)
        }
        return StorePosition(time + "|" + rest.path(p.name))
    }

    func position(_ token: StorePosition) throws -> Position? {
        guard !token.token.isEmpty else { return nil }
        guard let bar = token.token.firstIndex(of: "|") else {
            throw StoreError("bad-position", "'\(token.token)' is not a Firestore position (time|document)")
        }
        let text = String(token.token[..<bar])
        let value: FirestoreValue = layout.timeFormat == .timestamp ? .timestamp(text) : .double(Double(text) ?? 0)
        guard let date = layout.date(value) else {
            throw StoreError("bad-position", "'\(token.token)' is not a Firestore position (time|document)")
        }
        let path = token.token[token.token.index(after: bar)...]
        return Position(time: value, date: date, name: path.isEmpty ? "" : rest.name(String(path)))
    }

    // MARK: Reading messages

    /// A message document as the worker reads it; nil for one that is not a message (no time).
    func message(_ doc: FirestoreDocument) -> (StoredMessage, Position)? {
        guard let timeValue = doc.fields[layout.time], let at = layout.date(timeValue),
              let conversation = doc.parentID else { return nil }
        let sender = doc.fields[layout.senderType]?.string ?? ""
        let usher = doc.fields["usher"]?.map
        var kind = StoredMessage.Kind.message
        var from: SenderRole
        if let own = usher?["kind"]?.string {
            from = own == "reply" ? .bot : .system
        } else if let role = layout.role(of: sender) {
            from = role
        } else if sender == layout.closeValue {
            kind = .close
            from = .system
        } else {
            return nil   // a sender of no role Usher knows: not Usher's to read
        }
        if kind == .message && from == .system && usher == nil && layout.botValue == sender && layout.systemValue != sender {
            from = .bot
        }
        var m = StoredMessage(
            seq: 0, id: doc.id, conversationID: conversation, kind: kind, from: from,
            senderID: layout.senderID.flatMap { doc.fields[$0]?.string } ?? usher?["senderId"]?.string
                ?? (from == .customer ? conversation : nil),
            senderName: layout.senderName.flatMap { doc.fields[$0]?.string } ?? usher?["senderName"]?.string,
            text: doc.fields[layout.content]?.string ?? "", at: at, ruleID: usher?["rule"]?.string)
        if let f = layout.quickReplies, case let .array(items)? = doc.fields[f] {
            // Items without a title (written by something else) are not quick replies Usher knows.
            m.quickReplies = items.compactMap { item in
                item.map.flatMap { q in q["title"]?.string.map { QuickReply(title: $0, url: q["url"]?.string) } }
            }
        }
        return (m, Position(time: timeValue, date: at, name: doc.name, created: FirestoreTime.parse(doc.createTime)))
    }

    /// Every conversation's messages in the intake's order: by time, then document name.
    func intakeQuery() -> FirestoreQuery {
        var q = FirestoreQuery(collection: layout.messages, allDescendants: true)
        q.orderBy = [layout.time, "__name__"]
        return q
    }

    /// Messages of every conversation after `after` (nil: from the beginning), in order.
    func messages(after: Position?, limit: Int) async throws -> [(StoredMessage, Position)] {
        guard let after else { return try await messages(nil, before: false, limit: limit) }
        // A position with no document: just before its time (`usher run --from TIME`).
        if after.name.isEmpty { return try await messages([after.time], before: true, limit: limit) }
        return try await messages([after.time, .reference(after.name)], before: false, limit: limit)
    }

    /// Messages of every conversation from the cursor `values` (of time, then name), in order.
    func messages(_ values: [FirestoreValue]?, before: Bool, limit: Int) async throws -> [(StoredMessage, Position)] {
        var q = intakeQuery()
        q.startAt = values.map { ($0, before) }
        q.limit = limit
        return try await call { try await self.rest.runQuery(q) }.compactMap(message)
    }

    /// The bot's position; for a worker's store (`Options.start`), a bot's first position is
    /// where `--from` says, written with it as `since`: the floor of every read after.
    public func position(bot: String) async throws -> StorePosition {
        let name = rest.name(botPath(bot))
        for _ in 0..<5 {
            let doc = try await call { try await self.rest.batchGet([name]) }[0]
            if let since = doc?.fields["since"]?.string {
                let floor = try position(StorePosition(since))
                memory.withLock { $0.since[bot] = floor }
            }
            if let stored = doc?.fields["position"]?.string { return StorePosition(stored) }
            guard let start = options.start else { return .start }
            let since = try await firstPosition(start)
            let token = since.map(self.token) ?? .start
            do {
                try await rest.commit([.update(name, ["since": .string(token.token), "position": .string(token.token), "bot": .string(bot)],
                                               mask: ["since", "position", "bot"], readAt: doc?.updateTime)])
                memory.withLock { $0.since[bot] = since }
                return token
            } catch let error as FirestoreError where error.isPrecondition {
                continue   // another worker started the bot meanwhile: take its start
            } catch let error as FirestoreError {
                throw error.storeError
            }
        }
        throw StoreError("position-race", "the position of bot \(bot) kept changing while it was read", transient: true)
    }

    /// Where a bot starts: after the newest message (`now`), before the first of `time` on, or
    /// at the beginning (nil).
    func firstPosition(_ start: StartPosition) async throws -> Position? {
        switch start {
        case .beginning:
            return nil
        case let .time(date):
            return Position(time: layout.timeValue(date), date: date, name: "")
        case .now:
            var q = intakeQuery()
            q.descending = true
            q.limit = 1
            let newest = try await call { try await self.rest.runQuery(q) }
            guard let doc = newest.first, let t = doc.fields[layout.time], let date = layout.date(t) else { return nil }
            return Position(time: t, date: date, name: doc.name)
        }
    }

    public func pending(bot: String, after token: StorePosition, limit: Int) async throws -> Page {
        let after = try position(token)
        let now = ContinuousClock.now
        let (sweep, rescan) = memory.withLock { m -> (Bool, Bool) in
            let behind = m.furthest[bot].map { f in after.map { $0 < f } ?? true } ?? false
            let due = m.lastSweep[bot].map { now - $0 >= options.sweepInterval } ?? true
            return (behind || due, behind)
        }
        // A whole page the range already holds (a batch's read ahead of the intake), else a query.
        var found: [(StoredMessage, Position)]
        if !sweep, let held = memory.withLock({ $0.known[bot]?.page(after: after, limit: limit) }) {
            found = held
        } else {
            found = try await messages(after: after, limit: limit)
        }
        // Messages of one instant in the order they were written.
        found.sort { $0.1.arrivedBefore($1.1) }
        // The page ends at its last inbound message, not at Usher's own replies after it: they
        // are stamped with this machine's clock, and a customer whose phone runs behind it
        // would otherwise write "before" the position. A page of nothing but replies goes on.
        let lastInbound = found.filter { Self.isInbound($0.0) }.map(\.1).max()
        let reached = lastInbound ?? (found.count == limit ? found.map(\.1).max() : nil)
        let end = reached.map { last in after.map { max(last, $0) } ?? last } ?? after
        if sweep {
            memory.withLock { $0.lastSweep[bot] = now }
            found = try await swept(bot: bot, before: after).sorted { $0.1.arrivedBefore($1.1) } + found
        }
        remember(bot: bot, after: after, swept: sweep, found: found, end: end)
        if !found.isEmpty { memory.withLock { $0.lastActivity = now } }
        memory.withLock { m in
            // What was read for commits: kept for the conversations in flight, not for ever.
            if m.read.count > 20_000 { m.read.removeAll() }
            if let end, m.furthest[bot].map({ $0 < end }) ?? true { m.furthest[bot] = end }
            if rescan { m.furthest[bot] = end }
        }
        let inbound = found.filter { Self.isInbound($0.0) }
        let kept = try await notDone(bot: bot, inbound)
        return Page(messages: kept, end: end.map { self.token($0) } ?? token)
    }

    /// Whether the worker decides `m`: customer and agent messages, close events.
    static func isInbound(_ m: StoredMessage) -> Bool { m.from == .customer || m.from == .agent || m.kind == .close }

    /// The look-back behind `position`: messages from `lookback` before it up to it.
    func swept(bot: String, before position: Position?) async throws -> [(StoredMessage, Position)] {
        guard let position, layout.lookback > .zero else { return [] }
        let since = memory.withLock { $0.since[bot] }
        let from = max(position.date.addingTimeInterval(-layout.lookback.seconds), since?.date ?? .distantPast)
        var q = intakeQuery()
        q.filters = [(layout.time, .greaterOrEqual, layout.timeValue(from)), (layout.time, .lessOrEqual, position.time)]
        var out: [(StoredMessage, Position)] = []
        while true {
            q.limit = 1000
            let page = try await call { try await self.rest.runQuery(q) }
            out += page.compactMap(message).filter { m, p in p <= position && since.map { p > $0 } ?? true }
            guard page.count == 1000, let last = page.last, let t = last.fields[layout.time] else { break }
            q.startAfter = [t, .reference(last.name)]
        }
        return out
    }

    /// The messages of `found` not done for `bot`, of conversations this worker holds or can
    /// claim now. Reads the states and conversations with one `batchGet` (kept for `states`
    /// and the commits), and claims the conversations not held with one `batchWrite`.
    func notDone(bot: String, _ found: [(StoredMessage, Position)]) async throws -> [StoredMessage] {
        guard !found.isEmpty else { return [] }
        var conversations: [String] = []
        var seen = Set<String>()
        for (m, _) in found where seen.insert(m.conversationID).inserted { conversations.append(m.conversationID) }
        var snapshots: [String: Snapshot] = [:]
        let now = Date()
        guard options.leases else {
            snapshots = try await self.snapshots(bot: bot, conversations)
            memory.withLock { m in for (c, s) in snapshots { m.keep(s, for: bot + "/" + c) } }
            return keep(found, snapshots: snapshots) { _ in true }
        }
        let renewBefore = now.addingTimeInterval(options.lease.seconds / 2)
        let unheld = memory.withLock { m in conversations.filter { (m.leases[bot + "/" + $0] ?? .distantPast) < renewBefore } }
        var names = conversations.flatMap { [rest.name(statePath(bot, $0)), rest.name(conversationPath($0))] }
        names += unheld.map { rest.name(leasePath(bot, $0)) }
        let docs = try await call { try await self.rest.batchGet(names) }
        for (i, c) in conversations.enumerated() { snapshots[c] = Snapshot(state: docs[2 * i], conversation: docs[2 * i + 1]) }
        memory.withLock { m in for (c, s) in snapshots { m.keep(s, for: bot + "/" + c) } }

        // Claim what is free, expired or already this worker's.
        let until = now.addingTimeInterval(options.lease.seconds)
        var claims: [(String, FirestoreWrite)] = []
        for (i, c) in unheld.enumerated() {
            let lease = docs[2 * conversations.count + i]
            let holder = lease?.fields["worker"]?.string
            let expires = lease?.fields["until"].flatMap { $0.date() } ?? .distantPast
            guard lease == nil || holder == worker || expires < now else { continue }
            claims.append((c, .update(rest.name(leasePath(bot, c)), ["worker": .string(worker), "until": .timestamp(FirestoreTime.format(until))],
                                      readAt: lease?.updateTime)))
        }
        let applied = try await call { try await self.rest.batchWrite(claims.map(\.1)) }
        let held: Set<String> = memory.withLock { m in
            for (i, (c, _)) in claims.enumerated() where applied[i] { m.leases[bot + "/" + c] = until }
            return Set(conversations.filter { (m.leases[bot + "/" + $0] ?? .distantPast) > now })
        }
        return keep(found, snapshots: snapshots) { held.contains($0) }
    }

    /// The messages of `found` not done, of the conversations `held` says, with their
    /// conversation's channel and locale.
    func keep(_ found: [(StoredMessage, Position)], snapshots: [String: Snapshot], held: (String) -> Bool) -> [StoredMessage] {
        var marks: [String: DoneMarks] = [:]   // each state document's read once
        return found.compactMap { (m, p) in
            let snapshot = snapshots[m.conversationID]
            guard held(m.conversationID) else { return nil }
            let done = marks[m.conversationID] ?? DoneMarks(snapshot?.state)
            marks[m.conversationID] = done
            guard !isDone(m, p, in: done) else { return nil }
            var m = m
            m.channel = layout.channel.flatMap { snapshot?.conversation?.fields[$0]?.string }
            m.locale = layout.locale.flatMap { snapshot?.conversation?.fields[$0]?.string }
            return m
        }
    }

    /// Whether `m` is done by its conversation's state document's marks: among its done ids, or
    /// older than the look-back behind the newest done message (too late to answer).
    func isDone(_ m: StoredMessage, _ p: Position, in done: DoneMarks) -> Bool {
        if done.contains(m.id) { return true }
        guard let newest = done.newest else { return false }
        return p.date < newest.addingTimeInterval(-layout.lookback.seconds)
    }

    public func move(bot: String, to token: StorePosition) async throws {
        guard let to = try position(token) else { return }
        let name = rest.name(botPath(bot))
        for _ in 0..<5 {
            let doc = try await call { try await self.rest.batchGet([name]) }[0]
            if let stored = try doc?.fields["position"]?.string.map(StorePosition.init).flatMap(position), !(stored < to) { return }
            do {
                try await rest.commit([.update(name, ["position": .string(token.token), "bot": .string(bot)], mask: ["position", "bot"],
                                               readAt: doc?.updateTime)])
                return
            } catch let error as FirestoreError where error.isPrecondition {
                continue   // another worker moved it meanwhile: read again
            } catch let error as FirestoreError {
                throw error.storeError
            }
        }
    }

    public func waitForChanges(after token: StorePosition, timeout: Duration) async throws {
        let after = try position(token)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            let idle = clock.now - memory.withLock { $0.lastActivity }
            // Fast after activity, slower as the store stays quiet.
            var pause = options.minPoll
            while pause < options.maxPoll && pause * 4 < idle { pause *= 2 }
            // Usher's own replies after the position are not news.
            if try await messages(after: after, limit: 32).contains(where: { Self.isInbound($0.0) }) {
                memory.withLock { $0.lastActivity = clock.now }
                return
            }
            try await Task.sleep(until: min(deadline, clock.now + min(pause, options.maxPoll)), clock: clock)
        }
    }

    // MARK: States

    /// For a worker's store, the states as the last read of their conversations found them (a
    /// page's read, or a commit's write) within 2 s, else read now: a stale one costs a conflict
    /// at the commit, never a wrong write. For any other, read now.
    public func states(bot: String, conversations: [String]) async throws -> [String: ConversationState] {
        var found: [String: Snapshot] = memory.withLock { m in
            var out: [String: Snapshot] = [:]
            // Only a worker's commits check what they read; the CLI's reads (`usher send
            // --wait` asking who owns the conversation now) are always fresh.
            guard options.leases else { return out }
            let fresh = ContinuousClock.now - .seconds(2)
            for c in conversations { if let s = m.read[bot + "/" + c], s.at > fresh { out[c] = s } }
            return out
        }
        let missing = conversations.filter { found[$0] == nil }
        if !missing.isEmpty {
            let read = try await snapshots(bot: bot, missing)
            found.merge(read) { a, _ in a }
            memory.withLock { m in for (c, s) in read { m.keep(s, for: bot + "/" + c) } }
        }
        var out: [String: ConversationState] = [:]
        for (c, s) in found { if let state = try decodeState(s.state) { out[c] = state } }
        return out
    }

    /// Reads the state and conversation documents of `conversations`.
    func snapshots(bot: String, _ conversations: [String]) async throws -> [String: Snapshot] {
        let names = conversations.flatMap { [rest.name(statePath(bot, $0)), rest.name(conversationPath($0))] }
        let docs = try await call { try await self.rest.batchGet(names) }
        var out: [String: Snapshot] = [:]
        for (i, c) in conversations.enumerated() { out[c] = Snapshot(state: docs[2 * i], conversation: docs[2 * i + 1]) }
        return out
    }

    func decodeState(_ doc: FirestoreDocument?) throws -> ConversationState? {
        guard let text = doc?.fields["state"]?.string else { return nil }
        do {
            var state = try StateJSON.decode(text)
            if let v = doc?.fields["version"]?.integer { state.version = Int(v) }
            return state
        } catch {
            throw StoreError("bad-state", "the state in \(doc.map { rest.path($0.name) } ?? "?") is not Usher's: \(error)")
        }
    }

    // MARK: Committing

    public func commit(batch: [Commit]) async throws -> [CommitResult] {
        // Conversations are independent: each one's commits in order, the conversations at once.
        var order: [String] = []
        var byConversation: [String: [Int]] = [:]
        for (i, c) in batch.enumerated() {
            let key = c.bot + "/" + c.inbound.conversationID
            if byConversation[key] == nil { order.append(key) }
            byConversation[key, default: []].append(i)
        }
        var results = [CommitResult](repeating: .conflict, count: batch.count)
        let current = try await refreshKnown(batch)
        try await withThrowingTaskGroup(of: [(Int, CommitResult)].self) { group in
            var running = 0
            for key in order {
                if running >= 8, let done = try await group.next() {
                    for (i, r) in done { results[i] = r }
                    running -= 1
                }
                let indices = byConversation[key]!
                group.addTask {
                    var links = BatchLinks<String>()
                    var view: View?   // the conversation's messages, read once for its commits in this batch
                    var out: [(Int, CommitResult)] = []
                    for i in indices {
                        out.append((i, try await links.result(of: batch[i]) { try await self.commitOne(batch[i], view: &view, known: current.contains(batch[i].bot)) }))
                    }
                    return out
                }
                running += 1
            }
            for try await done in group { for (i, r) in done { results[i] = r } }
        }
        return results
    }

    /// One inbound message's effects, atomically: see the type's comment. What was read for a
    /// commit that was not written is forgotten: the worker decides again from a fresh read.
    func commitOne(_ c: Commit, view: inout View?, known: Bool = false) async throws -> CommitResult {
        let result = try await attempt(c, view: &view, known: known)
        if !result.isWritten { _ = memory.withLock { $0.read.removeValue(forKey: c.bot + "/" + c.inbound.conversationID) } }
        return result
    }

    private func attempt(_ c: Commit, view: inout View?, known: Bool) async throws -> CommitResult {
        let conversation = c.inbound.conversationID
        var snapshot = memory.withLock { $0.read[c.bot + "/" + conversation] }
        for attempt in 0..<6 {
            if snapshot == nil || attempt > 0 {
                snapshot = try await snapshots(bot: c.bot, [conversation])[conversation]
            }
            guard let s = snapshot else { continue }
            let stored = try decodeState(s.state)
            if let inbound = c.inbound.position(in: self), isDone(c.inbound, inbound, in: DoneMarks(s.state)) { return .duplicate }
            if (stored?.version ?? 0) != c.expectedVersion { return .conflict }
            // What else the conversation holds since the done ones: an earlier inbound message
            // not done (out of order), an agent's message after this one (silenced). Read for the
            // first of the conversation's commits in the batch, and again after a failed try.
            if view == nil || attempt > 0 {
                view = attempt == 0 && known ? knownView(c, state: s.state) : nil
                if view == nil { view = try await self.view(c, state: s.state) }
            }
            let check = view!.check(c, store: self, state: s.state)
            if check.earlierUndone { return .outOfOrder }
            let assigned = layout.assignedToAgent.flatMap { s.conversation?.fields[$0]?.bool } ?? false
            let silenced = check.agentAfter || (assigned && (stored?.owner ?? .bot) == .bot && c.inbound.from != .agent)
            let fields = stateFields(c, s)
            let writes = self.writes(c, s, state: fields, stored: stored, silenced: silenced, after: check.latest)
            do {
                let times = try await rest.commit(writes)
                // The documents as now written: the next commit of this conversation reads nothing.
                let statePath = rest.name(self.statePath(c.bot, conversation))
                var next = s
                next.at = .now
                for (i, w) in writes.enumerated() where i < times.count {
                    guard case let .update(name, _, _) = w.operation else { continue }
                    if name == statePath {
                        next.state = FirestoreDocument(name: name, fields: fields, updateTime: times[i])
                    } else if name == s.conversation?.name {
                        next.conversation?.updateTime = times[i]
                        if let field = layout.assignedToAgent, c.state.owner != (stored?.owner ?? .bot) {
                            next.conversation?.fields[field] = .bool(c.state.owner != .bot)
                        }
                    }
                }
                memory.withLock { $0.read[c.bot + "/" + conversation] = next }
                view!.done.insert(c.inbound.id)
                view!.latest = max(view!.latest, c.inbound.at, writes.compactMap { w -> Date? in
                    guard case let .update(_, fields, nil) = w.operation, w.increments.isEmpty else { return nil }
                    return layout.date(fields[layout.time])
                }.max() ?? .distantPast)
                return silenced ? .silenced : .committed
            } catch let error as FirestoreError where error.isPrecondition {
                continue   // someone wrote meanwhile (another worker, the app, an earlier try of this one): read again
            } catch let error as FirestoreError {
                throw error.storeError
            }
        }
        return .conflict
    }

    /// A conversation's messages as one read saw them, for the checks of its commits in a batch.
    struct View {
        var messages: [(StoredMessage, Position)]
        /// Inbound messages this batch has committed since the read.
        var done: Set<String> = []
        /// The newest time in the conversation (its messages, the replies written since).
        var latest: Date

        /// Whether an earlier inbound message than `c`'s is not done, whether an agent wrote
        /// after it, and the time a reply must come after.
        func check(_ c: Commit, store: FirestoreStore, state: FirestoreDocument?) -> (earlierUndone: Bool, agentAfter: Bool, latest: Date) {
            guard let inbound = c.inbound.position(in: store) else { return (false, false, latest) }
            // The inbound message as stored (its write time orders it among messages of its instant).
            let me = messages.first { $0.0.id == c.inbound.id }?.1 ?? inbound
            var earlier = false, agent = false
            let marks = DoneMarks(state)
            for (m, p) in messages where m.id != c.inbound.id {
                if p.arrivedBefore(me) {
                    if FirestoreStore.isInbound(m), !done.contains(m.id), !store.isDone(m, p, in: marks) { earlier = true }
                } else if m.from == .agent {
                    agent = true
                }
            }
            return (earlier, agent, max(latest, c.inbound.at))
        }
    }

    /// The conversation's messages from `checkFloor`, read from Firestore.
    func view(_ c: Commit, state: FirestoreDocument?) async throws -> View {
        var q = FirestoreQuery(parent: messagesParent(c.inbound.conversationID), collection: layout.messages)
        q.orderBy = [layout.time, "__name__"]
        q.filters = [(layout.time, .greaterOrEqual, layout.timeValue(checkFloor(c, state: state)))]
        var docs: [(StoredMessage, Position)] = []
        while true {
            q.limit = 500
            let page = try await call { try await self.rest.runQuery(q) }
            docs += page.compactMap(message)
            guard page.count == 500, let last = page.last, let t = last.fields[layout.time] else { break }
            q.startAfter = [t, .reference(last.name)]
        }
        docs = afterStart(docs, bot: c.bot)
        return View(messages: docs, latest: docs.map(\.1.date).max() ?? c.inbound.at)
    }

    /// The commit's writes: outgoing messages (unless silenced), the state, the conversation.
    func writes(_ c: Commit, _ s: Snapshot, state: [String: FirestoreValue], stored: ConversationState?, silenced: Bool,
                after latest: Date) -> [FirestoreWrite] {
        let conversation = c.inbound.conversationID
        var writes: [FirestoreWrite] = []
        if !silenced {
            for (i, out) in c.outgoing.enumerated() {
                // After every message of the conversation so far, whatever the decision's clock
                // said: the app shows messages ordered by time.
                let at = max(out.at, latest.addingTimeInterval(Double(i + 1) / 1_000_000))
                var fields: [String: FirestoreValue] = [
                    layout.senderType: .string(layout.value(of: out.from)),
                    layout.content: .string(out.text),
                    layout.time: layout.timeValue(at),
                    "usher": .map(["bot": .string(c.bot), "rule": .string(out.ruleID), "kind": .string(out.from == .bot ? "reply" : "notice"),
                                   "key": .string(out.idempotencyKey), "senderId": .string(out.senderID), "senderName": .string(out.senderName)]),
                ]
                // A layout whose sender field is also its role field keeps the role value there.
                if let f = layout.senderID, f != layout.senderType { fields[f] = .string(out.senderID) }
                if let f = layout.senderName { fields[f] = .string(out.senderName) }
                if let f = layout.quickReplies, !out.quickReplies.isEmpty {
                    fields[f] = .array(out.quickReplies.map { q in .map(["title": .string(q.title)].merging(q.url.map { ["url": .string($0)] } ?? [:]) { a, _ in a }) })
                }
                writes.append(.create(rest.name(messagesParent(conversation) + "/" + layout.messages + "/" + Self.outgoingID(out.idempotencyKey)), fields))
            }
        }
        writes.append(.update(rest.name(statePath(c.bot, conversation)), state, readAt: s.state?.updateTime))
        // The app's conversation fields: the handoff flag when the owner changed, the count.
        var fields: [String: FirestoreValue] = [:]
        var mask: [String] = []
        if let field = layout.assignedToAgent, c.state.owner != (stored?.owner ?? .bot) {
            fields[field] = .bool(c.state.owner != .bot)
            mask.append(field)
        }
        var conversationWrite = FirestoreWrite.update(rest.name(conversationPath(conversation)), fields, mask: mask,
                                                      readAt: s.conversation?.updateTime)
        if let field = layout.customerMessageCount, c.inbound.from == .customer, c.inbound.kind == .message {
            conversationWrite.increments = [(field, 1)]
        }
        if !mask.isEmpty || !conversationWrite.increments.isEmpty || s.conversation != nil {
            // Written even with nothing to change when it exists: its precondition makes an
            // assignment by the app since the read fail the commit.
            writes.append(conversationWrite)
        }
        return writes
    }

    /// The state document's fields after `c`.
    func stateFields(_ c: Commit, _ s: Snapshot) -> [String: FirestoreValue] {
        let done = DoneMarks(s.state).adding(c.inbound.id, at: c.inbound.at, lookback: layout.lookback.seconds)
        var fields: [String: FirestoreValue] = [
            "conversation": .string(c.inbound.conversationID),
            "state": .string(StateJSON.encode(c.state)),
            "version": .integer(Int64(c.state.version)),
            "owner": .string(c.state.owner.rawValue),
            "done": done.value,
            "ruleSetVersion": .string(c.ruleSetVersion),
            "updatedAt": .timestamp(FirestoreTime.format(Date())),
        ]
        // The inbox's fields: kept while the conversation waits, set by the handoff.
        let old = s.state?.fields ?? [:]
        if c.state.owner == .waiting {
            if let handoff = c.notifications.first(where: \.isHandoff) {
                fields["waitingSince"] = .timestamp(FirestoreTime.format(handoff.at))
                fields["queue"] = .string(handoff.queue)
                fields["reason"] = .string(handoff.reason)
                fields["lastMessage"] = .string(handoff.lastMessage)
                if let name = handoff.customerName { fields["customerName"] = .string(name) }
            } else {
                for key in ["waitingSince", "queue", "reason", "lastMessage", "customerName"] { fields[key] = old[key] }
                if c.inbound.from == .customer { fields["lastMessage"] = .string(c.inbound.text) }
                if fields["waitingSince"] == nil { fields["waitingSince"] = .timestamp(FirestoreTime.format(c.inbound.at)) }
            }
        }
        return fields.compactMapValues { $0 }
    }

    // MARK: -

    /// Runs a REST call, with Firestore's errors as the worker's (`StoreError`: transient ones retried).
    func call<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as FirestoreError {
            throw error.storeError
        }
    }
}

extension StoredMessage {
    /// Where this message stands in the store's order (its time and document name).
    func position(in store: FirestoreStore) -> FirestoreStore.Position? {
        let name = store.rest.name(store.messagesParent(conversationID) + "/" + store.layout.messages + "/" + id)
        return FirestoreStore.Position(time: store.layout.timeValue(at), date: at, name: name)
    }
}
