import Foundation
import UsherEngine
import UsherStore

/// One group commit in one transaction, in one round trip when the batch is as its worker read
/// it, else two (libpq pipelines).
///
/// - Two round trips: first `BEGIN` and every read that decides each commit's result (done
///   marks, the states — locked —, earlier messages not done, agents' messages); then, once the
///   commits are classified in order as `ChatStore.commit(batch:)` says, every write — one
///   statement per table — and `COMMIT`.
/// - One round trip, first: when every commit says what it expects (`Commit.expectedVersion`,
///   `expectedOwner`) and those expectations make every commit `.committed`, the writes are
///   computed from them and sent at once — the locks, `PGSQL.expectBatch` (which raises unless
///   the reads would find exactly that), the writes — as one pipeline without `BEGIN`, which
///   the server runs as one implicit transaction committed at the pipeline's sync point. When
///   `expectBatch` raises, that transaction is rolled back there and the two round trips
///   follow.
///
/// A state or done mark created by another worker in the meantime is a unique violation: the
/// transaction is rolled back and the batch classified again.
struct PGCommit {
    let sql: PGSQL
    let batch: [Commit]

    private struct Pair: Hashable { var bot: String; var conversation: String }

    /// The error that sends a batch round again: a state or done mark another worker wrote
    /// first (a unique violation). Transient: should it outlast the store's own retries, the
    /// worker retries it with backoff rather than stopping.
    static let race = StoreError("pg-race", "another worker committed part of this batch first", transient: true)

    static func lostRace(_ error: StoreError) -> Bool { error.code == race.code }

    typealias Statement = (sql: String, params: [String?])

    /// Every statement a commit in one round trip can send — the locks, the check, the writes —
    /// each of whose parameters is an array: the commit connections prepare them as they connect
    /// and `PostgresStore.warmUp` runs each once on empty arrays.
    static func statements(_ sql: PGSQL) -> [String] {
        [sql.lockStates, sql.lockConversations, sql.expectBatch, sql.openHandoffs, sql.updateConversations,
         sql.insertOutgoing, sql.insertNotifications, sql.insertStates, sql.updateStates, sql.insertProcessed,
         sql.closeHandoffs].compactMap { $0 }
    }

    /// The results, and whether the batch went in one round trip. The caller's task waits for
    /// each reply on `thread` (`PGConnection.pipeline(_:on:)`).
    func write(_ db: PGConnection, on thread: ThreadExecutor) async throws -> (results: [CommitResult], oneRoundTrip: Bool) {
        do {
            let pairs = Pairs(batch)
            let reads = readStatements(pairs)
            if let expected = Found(expecting: batch, pairs) {
                let (results, writes) = classify(expected, reads, pairs)
                if !writes.isEmpty, results.allSatisfy({ $0 == .committed }) {
                    // One implicit transaction: a pipeline without BEGIN commits at its sync point,
                    // or rolls back there when a statement fails.
                    do {
                        try await db.pipeline(reads.locks + [expectation(reads, pairs)] + writes, on: thread)
                        return (results, true)
                    } catch where error.code == "pg-\(PGSQL.batchChanged)" {
                        // Then check first.
                    }
                }
            }
            let r = try await db.pipeline([("BEGIN", [])] + reads.statements, on: thread)
            let (results, writes) = classify(Found(Array(r.dropFirst()), reads, pairs), reads, pairs)
            try await db.pipeline(writes + [("COMMIT", [])], on: thread)
            return (results, false)
        } catch {
            if db.isOK { try? db.script("ROLLBACK") }
            if PGError.isUniqueViolation(error) { throw Self.race }
            throw error
        }
    }

    /// The batch's (bot, conversation) pairs, each once in batch order, and each commit's index
    /// among them: the classification and the writes look a pair up in arrays instead of
    /// hashing two strings again and again.
    private struct Pairs {
        var unique: [Pair] = []
        var of: [Int] = []
        var index: [Pair: Int] = [:]
        /// Each pair's first commit (what it expects is the pair's expectation).
        var first: [Int] = []
        /// Array literals several statements send: every commit's bot and message id, every
        /// pair's bot and conversation (built once: they are most of a batch's text).
        var batchBots = "", batchIDs = "", bots = "", conversations = ""

        init(_ batch: [Commit]) {
            of.reserveCapacity(batch.count)
            for i in batch.indices {
                let p = Pair(bot: batch[i].bot, conversation: PGText.clean(batch[i].inbound.conversationID))
                if let i = index[p] {
                    of.append(i)
                } else {
                    index[p] = unique.count
                    of.append(unique.count)
                    unique.append(p)
                    first.append(i)
                }
            }
            batchBots = PGText.array(batch.lazy.map(\.bot))
            batchIDs = PGText.array(batch.lazy.map(\.inbound.id))
            bots = PGText.array(unique.lazy.map(\.bot))
            conversations = PGText.array(unique.lazy.map(\.conversation))
        }
    }

    /// The reads, and what the classification needs to find their results.
    private struct Reads {
        var statements: [Statement] = []
        var agentCheck = false
        /// The statements among them that take locks (the one-round-trip commit sends these).
        var locks: [Statement] = []
        /// The agent check's conversations and lows, as array literals (empty without it).
        var agentConversations = "{}"
        var agentLows = "{}"
        /// Each pair's newest inbound seq in the batch, as an array literal.
        var high = "{}"
    }

    private func readStatements(_ pairs: Pairs) -> Reads {
        var reads = Reads()
        // 1. Done marks. 2. The states, locked until the transaction ends. 3. Earlier inbound
        // messages not done, between each state's watermark and the batch.
        var high = [Int64](repeating: 0, count: pairs.unique.count)
        for i in batch.indices { high[pairs.of[i]] = max(high[pairs.of[i]], batch[i].inbound.seq) }
        reads.high = PGText.array(high)
        let lockStates: Statement = (sql.lockStates, [pairs.bots, pairs.conversations])
        reads.locks = [lockStates]
        reads.statements = [
            (sql.processed, [pairs.batchBots, pairs.batchIDs]),
            lockStates,
            (sql.undoneBetween, [pairs.bots, pairs.conversations, reads.high]),
        ]
        // 4. The conversations' rows locked, then the newest agent message after the oldest
        // inbound message of each conversation.
        if batch.indices.contains(where: { !batch[$0].outgoing.isEmpty }) {
            reads.agentCheck = true
            var low: [String: Int64] = [:]
            for i in batch.indices { low[batch[i].inbound.conversationID] = min(low[batch[i].inbound.conversationID] ?? .max, batch[i].inbound.seq) }
            let conversations = Array(low.keys).sorted()
            reads.agentConversations = PGText.array(conversations)
            reads.agentLows = PGText.array(conversations.map { low[$0]! })
            if let lock = sql.lockConversations {
                reads.statements.append((lock, [reads.agentConversations]))
                reads.locks.append(reads.statements.last!)
            }
            reads.statements.append((sql.agentAfter, [reads.agentConversations, reads.agentLows]))
        }
        return reads
    }

    /// `PGSQL.expectBatch` for what `Found(expecting:)` assumed.
    private func expectation(_ reads: Reads, _ pairs: Pairs) -> Statement {
        (sql.expectBatch, [
            pairs.batchBots, pairs.batchIDs, pairs.bots, pairs.conversations,
            PGText.array(pairs.first.map { Int64(batch[$0].expectedVersion) }), reads.high,
            PGText.array(batch.map(\.inbound.seq)), reads.agentConversations, reads.agentLows,
            "{" + pairs.first.map { batch[$0].expectedOwner != nil ? "t" : "f" }.joined(separator: ",") + "}",
        ])
    }

    /// What the reads found: done marks, the states' existence, versions and owners (by pair),
    /// the inbound messages not done below each pair's `high`, the newest agent message after
    /// each conversation's oldest inbound message of the batch.
    private struct Found {
        var done = Set<Pair>()   // (bot, message id)
        var exists: [Bool]
        var version: [Int]
        var owner: [Owner?]
        var undone: [[Int64]]
        var agentSeq: [String: Int64] = [:]

        init(_ r: [PGResult], _ reads: Reads, _ pairs: Pairs) {
            for i in 0..<r[0].rows { done.insert(Pair(bot: r[0].string(i, 0), conversation: r[0].string(i, 1))) }
            let n = pairs.unique.count
            exists = [Bool](repeating: false, count: n)
            version = [Int](repeating: 0, count: n)
            owner = [Owner?](repeating: nil, count: n)
            for i in 0..<r[1].rows {
                guard let k = pairs.index[Pair(bot: r[1].string(i, 0), conversation: r[1].string(i, 1))] else { continue }
                exists[k] = true
                version[k] = r[1].int(i, 2)
                owner[k] = Owner(rawValue: r[1].string(i, 3))
            }
            undone = [[Int64]](repeating: [], count: n)
            for i in 0..<r[2].rows {
                guard let k = pairs.index[Pair(bot: r[2].string(i, 0), conversation: r[2].string(i, 1))] else { continue }
                undone[k].append(r[2].int64(i, 2))
            }
            if reads.agentCheck, let agents = r.last {
                for i in 0..<agents.rows { agentSeq[agents.string(i, 0)] = agents.int64(i, 1) }
            }
        }

        /// What the batch's commits expect: no done mark, each pair's state as its first commit
        /// read it (there when the commit says its owner — a worker says it exactly when it read
        /// a state, which may be at version 0), nothing undone or written by an agent in
        /// between. Nil when a commit expects a state without saying its owner.
        init?(expecting batch: [Commit], _ pairs: Pairs) {
            let expected = pairs.first.map { batch[$0] }
            guard expected.allSatisfy({ $0.expectedVersion == 0 || $0.expectedOwner != nil }) else { return nil }
            exists = expected.map { $0.expectedOwner != nil }
            version = expected.map(\.expectedVersion)
            owner = expected.map(\.expectedOwner)
            undone = [[Int64]](repeating: [], count: expected.count)
        }
    }

    /// Classifies the commits in order (later commits see earlier ones) from the reads' results;
    /// returns the results and the writes of the committed ones (as indices into `batch`).
    private func classify(_ found: Found, _ reads: Reads, _ pairs: Pairs) -> ([CommitResult], [Statement]) {
        var done = found.done
        let n = pairs.unique.count
        let exists = found.exists, undone = found.undone, agentSeq = found.agentSeq
        var version = found.version
        var owner = found.owner

        var results: [CommitResult] = []
        results.reserveCapacity(batch.count)
        var doneSeqs = [[Int64]](repeating: [], count: n)
        var committed: [Int] = []
        var overtaken: [Bool] = []
        var handoffs = HandoffRounds()
        var links = BatchLinks()
        // `batch[i].…` rather than a copy of each commit: copying one retains every string in it.
        for i in batch.indices {
            let k = pairs.of[i]
            let seq = batch[i].inbound.seq
            let mark = Pair(bot: batch[i].bot, conversation: PGText.clean(batch[i].inbound.id))
            let unwritten: CommitResult? = if done.contains(mark) {
                .duplicate
            } else if let result = links.unwritten(batch[i]) {
                result
            } else if undone[k].contains(where: { $0 < seq && !doneSeqs[k].contains($0) }) {
                .outOfOrder
            } else if version[k] != batch[i].expectedVersion {
                .conflict
            } else {
                nil
            }
            links.record(batch[i], unwritten ?? .committed)
            if let unwritten {
                results.append(unwritten)
                continue
            }
            results.append(.committed)
            done.insert(mark)
            doneSeqs[k].append(seq)
            committed.append(i)
            if reads.agentCheck { overtaken.append((agentSeq[batch[i].inbound.conversationID] ?? 0) > seq) } else { overtaken.append(false) }
            version[k] = batch[i].state.version
            let before = owner[k]
            let now = batch[i].state.owner
            owner[k] = now
            // The inbox: a handoff opens when the owner becomes `waiting`, ends when it leaves it.
            if now == .waiting, before != .waiting {
                handoffs.add(.open(i), pairs.unique[k].conversation)
            } else if now != .waiting, before == .waiting {
                handoffs.add(.close(i), pairs.unique[k].conversation)
            }
        }
        if committed.isEmpty { return (results, []) }
        var writes = handoffs.rounds.flatMap(handoffStatements)
        writes += conversationStatements(committed)
        writes += outgoingStatements(committed, overtaken)
        writes += stateStatements(committed, pairs, exists: exists)
        writes.append(markDone(committed, reason: nil, committed.count == batch.count ? pairs : nil))
        return (results, writes)
    }

    /// 6. Conversations: the last state of each.
    private func conversationStatements(_ committed: [Int]) -> [Statement] {
        guard let q = sql.updateConversations else { return [] }
        let l = sql.l
        var last: [String: Int] = [:]   // the conversation's last commit
        var order: [String] = []
        for i in committed {
            let c = batch[i].inbound.conversationID
            if last[c] == nil { order.append(c) }
            last[c] = i
        }
        var params: [String?] = [PGText.array(order)]
        for w in sql.conversationWrites {
            params.append(PGText.array(optional: order.lazy.map { c -> String? in
                let s = batch[last[c]!].state
                switch w.param {
                case "owner": return l.ownerValues[s.owner.rawValue] ?? s.owner.rawValue
                case "assigned": return s.owner == .bot ? "false" : "true"
                case "count": return String(s.customerMessages)
                case "tags": return Self.json { $0.stringArray(s.tags) }
                case "metadata": return Self.json { $0.stringMap(s.metadata) }
                default: return s.customerID
                }
            }))
        }
        let now = Date().timeIntervalSince1970
        params.append(PGText.array(order.map { _ in now }))
        return [(q, params)]
    }

    /// 7. Replies and notices, unless an agent wrote after the inbound message. 8. Agent
    /// notifications.
    private func outgoingStatements(_ committed: [Int], _ overtaken: [Bool]) -> [Statement] {
        let l = sql.l
        var out: [Statement] = []
        let outgoing = zip(committed, overtaken).flatMap { i, over in over ? [] : batch[i].outgoing }
        if !outgoing.isEmpty {
            out.append((sql.insertOutgoing, [
                PGText.array(outgoing.map(\.idempotencyKey)), PGText.array(outgoing.map(\.conversationID)),
                PGText.array(outgoing.map { $0.from == .system ? l.systemValue : l.botValue }),
                PGText.array(outgoing.map(\.senderID)), PGText.array(outgoing.map(\.senderName)),
                PGText.array(outgoing.map(\.text)), PGText.array(outgoing.map { $0.at.timeIntervalSince1970 }),
                PGText.array(outgoing.map(\.ruleID)),
            ]))
        }
        let notes = committed.flatMap { i in batch[i].notifications.map { (batch[i].bot, $0) } }
        if !notes.isEmpty {
            out.append((sql.insertNotifications, [
                PGText.array(notes.map(\.0)), PGText.array(notes.map(\.1.idempotencyKey)),
                PGText.array(notes.map(\.1.conversationID)), PGText.array(notes.map(\.1.queue)),
                PGText.array(notes.map(\.1.reason)), PGText.array(notes.map(\.1.text)),
                PGText.array(optional: notes.map(\.1.customerName)), PGText.array(notes.map(\.1.lastMessage)),
                "{" + notes.map { $0.1.isHandoff ? "t" : "f" }.joined(separator: ",") + "}",
                PGText.array(notes.map { $0.1.at.timeIntervalSince1970 }),
            ]))
        }
        return out
    }

    /// 9. States: the last of each conversation, with the watermark; new ones inserted, the
    /// others (locked) updated.
    private func stateStatements(_ committed: [Int], _ pairs: Pairs, exists: [Bool]) -> [Statement] {
        var last = [Int](repeating: -1, count: pairs.unique.count)   // each pair's last commit
        var watermark = [Int64](repeating: 0, count: pairs.unique.count)
        var statePairs: [Int] = []
        for i in committed {
            let k = pairs.of[i]
            if last[k] < 0 { statePairs.append(k) }
            last[k] = i
            watermark[k] = max(watermark[k], batch[i].inbound.seq)
        }
        var out: [Statement] = []
        for update in [false, true] {
            let group = statePairs.filter { exists[$0] == update }
            if group.isEmpty { continue }
            let all = group.count == pairs.unique.count && group.indices.allSatisfy { group[$0] == $0 }
            out.append((update ? sql.updateStates : sql.insertStates, [
                all ? pairs.bots : PGText.array(group.lazy.map { pairs.unique[$0].bot }),
                all ? pairs.conversations : PGText.array(group.lazy.map { pairs.unique[$0].conversation }),
                PGText.array(group.map { Int64(batch[last[$0]].state.version) }),
                PGText.array(group.lazy.map { batch[last[$0]].state.owner.rawValue }),
                PGText.array(group.map { watermark[$0] }),
                PGText.array(group.lazy.map { PostgresStore.encodeState(batch[last[$0]].state) }),
                PGText.array(group.lazy.map { batch[last[$0]].ruleSetVersion }),
            ]))
        }
        return out
    }

    /// Handoffs opening and ending, in order, cut into rounds in which each conversation appears
    /// at most once: a round is written with one statement for its ends and one for its opens.
    struct HandoffRounds {
        /// A commit, by its index in the batch.
        enum Event { case open(Int), close(Int) }
        private(set) var rounds: [[Event]] = []
        private var inRound = Set<String>()

        mutating func add(_ e: Event, _ conversation: String) {
            if rounds.isEmpty || !inRound.insert(conversation).inserted {
                rounds.append([])
                inRound = [conversation]
            }
            rounds[rounds.count - 1].append(e)
        }
    }

    private func handoffStatements(_ round: [HandoffRounds.Event]) -> [Statement] {
        var out: [Statement] = []
        let ends = round.compactMap { if case let .close(i) = $0 { batch[i] } else { nil } }
        if !ends.isEmpty {
            out.append((sql.closeHandoffs, [PGText.array(ends.map(\.bot)), PGText.array(ends.map(\.inbound.conversationID))]))
        }
        let opens = round.compactMap { if case let .open(i) = $0 { batch[i] } else { nil } }
        if !opens.isEmpty {
            let handoff = opens.map { c in c.notifications.first { $0.isHandoff } }
            out.append((sql.openHandoffs, [
                PGText.array(opens.map(\.bot)), PGText.array(opens.map(\.inbound.conversationID)),
                PGText.array(opens.map { "\($0.bot):\($0.inbound.id):handoff" }),
                PGText.array(opens.map(\.inbound.id)),
                PGText.array(optional: handoff.map { $0?.queue }), PGText.array(optional: handoff.map { $0?.reason }),
                PGText.array(optional: opens.map(\.state.customerName)),
                PGText.array(optional: opens.map { c in c.outgoing.first { $0.from == .system }?.ruleID }),
            ]))
        }
        return out
    }

    /// Marks the batch's single message done with `reason`, writing nothing else.
    func quarantine(_ db: PGConnection, reason: String) throws -> CommitResult {
        do {
            return try PGSession.transaction(db) {
                let c = batch[0]
                let r = try db.execute(sql.processed, [PGText.array([c.bot]), PGText.array([c.inbound.id])], prepare: true)
                if r.rows > 0 { return .duplicate }
                let mark = markDone([0], reason: reason)
                try db.execute(mark.sql, mark.params, prepare: true)
                return .committed
            }
        } catch let error as StoreError where PGError.isUniqueViolation(error) {
            return .duplicate   // another worker marked it done meanwhile
        }
    }

    /// 10. Done marks; `whole`: the batch's literals, when `commits` is every commit of the batch.
    private func markDone(_ commits: [Int], reason: String?, _ whole: Pairs? = nil) -> Statement {
        (sql.insertProcessed, [
            whole?.batchBots ?? PGText.array(commits.lazy.map { batch[$0].bot }),
            whole?.batchIDs ?? PGText.array(commits.lazy.map { batch[$0].inbound.id }),
            PGText.array(commits.map { batch[$0].inbound.seq }), PGText.array(commits.lazy.map { batch[$0].inbound.conversationID }),
            PGText.array(optional: commits.lazy.map { _ in reason }),
        ])
    }

    static func json(_ write: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter(capacity: 64)
        write(&w)
        return w.text
    }
}
