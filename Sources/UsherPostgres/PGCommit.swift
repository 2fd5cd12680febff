import Foundation
import UsherEngine
import UsherJSON
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
///   computed from them and sent at once, as one pipeline without `BEGIN`, which the server
///   runs as one implicit transaction committed at its sync point. The writes check as they
///   go: the states are written only at their expected versions, with the order check
///   (`PGSQL.commitStates`); the conversations' rows are locked before the agent check
///   (`PGSQL.expectAgents`); a done mark already there is a unique violation. When a
///   check raises, that transaction is rolled back there and the two round trips follow.
///
/// A state or done mark created by another worker in the meantime is a unique violation, and
/// two workers' writes waiting for each other's rows a deadlock: the transaction is rolled back
/// and the batch classified again, in two round trips.
struct PGCommit {
    let sql: PGSQL
    let batch: [Commit]

    private struct Pair: Hashable { var bot: String; var conversation: String }

    /// The error that sends a batch round again: a state or done mark another worker wrote
    /// first (a unique violation), or a deadlock with another worker's commit. Transient:
    /// should it outlast the store's own retries, the worker retries it with backoff rather
    /// than stopping.
    static let race = StoreError("pg-race", "another worker committed part of this batch first", transient: true)

    static func lostRace(_ error: StoreError) -> Bool { error.code == race.code }

    typealias Statement = (sql: String, params: [String?])

    /// Every statement a commit can send but `BEGIN`, `COMMIT` and the reads, each of whose
    /// parameters is an array: the commit connections prepare them as they connect and
    /// `PostgresStore.warmUp` runs each once on empty arrays.
    static func statements(_ sql: PGSQL) -> [String] {
        [sql.commitStates, sql.updateConversations, sql.expectAgents, sql.expectOwners, sql.openHandoffs, sql.closeHandoffs,
         sql.insertOutgoing, sql.insertNotifications, sql.insertStates, sql.updateStates, sql.insertProcessed,
         sql.lockStates, sql.lockConversations].compactMap { $0 }
    }

    /// The results, and whether the batch went in one round trip. The caller's task waits for
    /// each reply on `thread` (`PGConnection.pipeline(_:on:)`). `checkFirst`: straight to the
    /// two round trips (the batch goes round again after a race: a done mark among its messages
    /// would fail the one round trip again).
    func write(_ db: PGConnection, on thread: ThreadExecutor, checkFirst: Bool = false) async throws -> (results: [CommitResult], oneRoundTrip: Bool) {
        do {
            let pairs = Pairs(batch)
            if !checkFirst, let expected = Found(expecting: batch, pairs) {
                let (results, written) = classify(expected, pairs)
                if !written.commits.isEmpty, results.allSatisfy({ $0.isWritten }) {
                    // One implicit transaction: a pipeline without BEGIN commits at its sync point,
                    // or rolls back there when a statement fails.
                    do {
                        try await db.pipeline(checkedWrites(written, pairs), on: thread)
                        return (results, true)
                    } catch where error.code == "pg-\(PGSQL.batchChanged)" {
                        // Then check first.
                    }
                }
            }
            let r = try await db.pipeline([("BEGIN", [])] + reads(pairs), on: thread)
            var (results, written) = classify(Found(Array(r.dropFirst()), pairs, ownership: sql.ownersChanged != nil), pairs)
            if results.contains(.silenced) { try await unsay(results, &written, pairs, db, on: thread) }
            try await db.pipeline(writes(written, pairs) + [("COMMIT", [])], on: thread)
            return (results, false)
        } catch {
            if db.isOK { try? db.script("ROLLBACK") }
            if PGError.isUniqueViolation(error) || PGError.isDeadlock(error) { throw Self.race }
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
        /// Each pair's newest inbound seq in the batch.
        var high: [Int64] = []
        /// The agent check's conversations and lows (each conversation's oldest inbound seq in
        /// the batch), and the owner each conversation's first commit decided from (the
        /// ownership check, `PGSQL.ownersChanged`), as array literals; "{}" when no commit
        /// writes a reply or notice.
        var agentConversations = "{}", agentLows = "{}", agentOwners = "{}"

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
            batchBots = PGText.array(batch) { $0.bot }
            batchIDs = PGText.array(batch) { $0.inbound.id }
            bots = PGText.array(unique) { $0.bot }
            conversations = PGText.array(unique) { $0.conversation }
            high = [Int64](repeating: 0, count: unique.count)
            for i in batch.indices { high[of[i]] = max(high[of[i]], batch[i].inbound.seq) }
            if batch.contains(where: { !$0.outgoing.isEmpty }) {
                var low: [String: Int64] = [:]
                var owner: [String: String] = [:]
                for c in batch {
                    low[c.inbound.conversationID] = min(low[c.inbound.conversationID] ?? .max, c.inbound.seq)
                    if owner[c.inbound.conversationID] == nil { owner[c.inbound.conversationID] = (c.expectedOwner ?? .bot).rawValue }
                }
                let agents = Array(low.keys).sorted()
                agentConversations = PGText.array(agents)
                agentLows = PGText.array(agents.map { low[$0]! })
                agentOwners = PGText.array(agents.map { owner[$0]! })
            }
        }

        /// Whether a commit of the batch writes a reply or notice: then no agent may have
        /// written after the batch's messages.
        var agentCheck: Bool { agentConversations != "{}" }
    }

    /// The reads of the two-round-trip commit (`Found` takes their results in this order).
    private func reads(_ pairs: Pairs) -> [Statement] {
        // 1. Done marks. 2. The states, locked until the transaction ends. 3. Earlier inbound
        // messages not done, between each state's watermark and the batch.
        var reads: [Statement] = [
            (sql.processed, [pairs.batchBots, pairs.batchIDs]),
            (sql.lockStates, [pairs.bots, pairs.conversations]),
            (sql.undoneBetween, [pairs.bots, pairs.conversations, PGText.array(pairs.high)]),
        ]
        // 4. The conversations' rows locked, then the newest agent message after the oldest
        // inbound message of each conversation, and those whose owner changed.
        if pairs.agentCheck {
            if let lock = sql.lockConversations { reads.append((lock, [pairs.agentConversations])) }
            reads.append((sql.agentAfter, [pairs.agentConversations, pairs.agentLows]))
            if let owners = sql.ownersChanged { reads.append((owners, [pairs.agentConversations, pairs.agentOwners])) }
        }
        return reads
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
        /// Conversations a person took (or gave back) since their commits were decided.
        var ownerChanged = Set<String>()

        init(_ r: [PGResult], _ pairs: Pairs, ownership: Bool) {
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
            if pairs.agentCheck {
                let agents = r[r.count - (ownership ? 2 : 1)]
                for i in 0..<agents.rows { agentSeq[agents.string(i, 0)] = agents.int64(i, 1) }
                if ownership, let changed = r.last { ownerChanged = Set((0..<changed.rows).map { changed.string($0, 0) }) }
            }
        }

        /// What the batch's commits expect: no done mark, each pair's state as its first commit
        /// read it (there when the commit says its owner — a worker says it exactly when it read
        /// a state, which may be at version 0), nothing undone or written by an agent in
        /// between. Nil when a commit expects a state without saying its owner.
        init?(expecting batch: [Commit], _ pairs: Pairs) {
            let first = pairs.first
            guard first.allSatisfy({ batch[$0].expectedVersion == 0 || batch[$0].expectedOwner != nil }) else { return nil }
            exists = first.map { batch[$0].expectedOwner != nil }
            version = first.map { batch[$0].expectedVersion }
            owner = first.map { batch[$0].expectedOwner }
            undone = [[Int64]](repeating: [], count: first.count)
        }
    }

    /// What the committed commits of a batch write.
    private struct Written {
        /// The committed commits, as indices into `batch`, in order.
        var commits: [Int] = []
        /// Whether an agent wrote after each committed commit's inbound message (its replies are
        /// not written).
        var overtaken: [Bool] = []
        var handoffs = HandoffRounds()
        /// What the classification started from, by pair: whether the state exists, its version.
        var exists: [Bool]
        var version: [Int]
        /// By pair, the state written instead of its last commit's (`unsay`).
        var states: [Int: ConversationState] = [:]
    }

    /// The states of the pairs with silenced commits, their replies taken back
    /// (`ConversationState.unsaying`): from the state before the first silenced commit — the
    /// commit before it in the batch, or the stored one (read here, its row locked by the
    /// check's reads).
    private func unsay(_ results: [CommitResult], _ w: inout Written, _ pairs: Pairs, _ db: PGConnection,
                       on thread: ThreadExecutor) async throws(StoreError) {
        var firstSilenced: [Int: Int] = [:]   // by pair
        var dropped: [Int: [OutgoingMessage]] = [:]
        var last: [Int: Int] = [:]
        for i in batch.indices where results[i].isWritten {
            let k = pairs.of[i]
            last[k] = i
            guard results[i] == .silenced else { continue }
            if firstSilenced[k] == nil { firstSilenced[k] = i }
            dropped[k, default: []] += batch[i].outgoing
        }
        // The state each first silenced commit was decided from: the batch's commit before it, or
        // the stored one.
        var before: [Int: ConversationState] = [:]
        var stored: [Int] = []
        for (k, i) in firstSilenced {
            if let p = (0..<i).last(where: { pairs.of[$0] == k }) { before[k] = batch[p].state } else { stored.append(k) }
        }
        if !stored.isEmpty {
            let statements: [Statement] = stored.map { k in (sql.state, [pairs.unique[k].bot, pairs.unique[k].conversation]) }
            let r = try await db.pipeline(statements, on: thread)
            for (k, result) in zip(stored, r) where result.rows > 0 {
                // A state this store cannot read back: the replies stay counted (as before this
                // check), rather than the commit failing.
                before[k] = try? PostgresStore.decodeState(result.string(0, 0))
            }
        }
        for (k, items) in dropped {
            guard let i = last[k] else { continue }
            w.states[k] = batch[i].state.unsaying(items, before: before[k])
        }
    }

    /// Classifies the commits in order (later commits see earlier ones) from what the reads found
    /// (or what the commits expect); returns the results and what the committed ones write.
    private func classify(_ found: Found, _ pairs: Pairs) -> ([CommitResult], Written) {
        let done = found.done
        let n = pairs.unique.count
        let exists = found.exists, undone = found.undone, agentSeq = found.agentSeq, ownerChanged = found.ownerChanged
        var version = found.version
        var owner = found.owner

        var results: [CommitResult] = []
        results.reserveCapacity(batch.count)
        var doneSeqs = [[Int64]](repeating: [], count: n)
        var written = Written(exists: exists, version: version)
        var links = BatchLinks<Int>()   // by pair
        // `batch[i].…` rather than a copy of each commit: copying one retains every string in it.
        for i in batch.indices {
            let k = pairs.of[i]
            let seq = batch[i].inbound.seq
            // Done: by the reads (usually none), or by a commit before it in the batch (the
            // same message for the same bot: the same pair and seq).
            let unwritten: CommitResult? = if doneSeqs[k].contains(seq)
                || (!done.isEmpty && done.contains(Pair(bot: batch[i].bot, conversation: PGText.clean(batch[i].inbound.id)))) {
                .duplicate
            } else if let result = links.unwritten(expecting: batch[i].expectedVersion, at: k) {
                result
            } else if undone[k].contains(where: { $0 < seq && !doneSeqs[k].contains($0) }) {
                .outOfOrder
            } else if version[k] != batch[i].expectedVersion {
                .conflict
            } else {
                nil
            }
            links.record(decided: batch[i].state.version, unwritten ?? .committed, at: k)
            if let unwritten {
                results.append(unwritten)
                continue
            }
            let overtaken = (!agentSeq.isEmpty && (agentSeq[batch[i].inbound.conversationID] ?? 0) > seq)
                || ownerChanged.contains(batch[i].inbound.conversationID)
            results.append(overtaken && !batch[i].outgoing.isEmpty ? .silenced : .committed)
            doneSeqs[k].append(seq)
            written.commits.append(i)
            written.overtaken.append(overtaken)
            version[k] = batch[i].state.version
            let before = owner[k]
            let now = batch[i].state.owner
            owner[k] = now
            // The inbox: a handoff opens when the owner becomes `waiting`, ends when it leaves it.
            // When the application's columns say who owns a conversation, the owner a commit
            // expects is the one it was presented with, not the stored one: every commit that
            // leaves a conversation not waiting ends its handoff, if one is open.
            if now == .waiting, before != .waiting {
                written.handoffs.add(.open(i), pairs.unique[k].conversation)
            } else if now != .waiting, before == .waiting || sql.l.readsOwnership {
                written.handoffs.add(.close(i), pairs.unique[k].conversation)
            }
        }
        return (results, written)
    }

    /// The writes of the two-round-trip commit, after its reads (the states' rows are locked).
    private func writes(_ w: Written, _ pairs: Pairs) -> [Statement] {
        if w.commits.isEmpty { return [] }
        var out = w.handoffs.rounds.flatMap(handoffStatements)
        out += conversationStatements(w.commits)
        out += outgoingStatements(w.commits, w.overtaken)
        out += stateStatements(w.commits, pairs, exists: w.exists, replacing: w.states)
        out.append(markDone(w.commits, reason: nil, w.commits.count == batch.count ? pairs : nil))
        return out
    }

    /// The writes of the one-round-trip commit, every commit committed, checking as they go
    /// (`PGCommit`): the states (at their expected versions, with the order check), the
    /// conversations' rows (locked first when there are replies), the agent check, then the
    /// rest. The states and conversations come first, as the two-round-trip commit locks them.
    private func checkedWrites(_ w: Written, _ pairs: Pairs) -> [Statement] {
        let states = StateRows(self, w.commits, pairs)
        precondition(states.pairs.count == pairs.unique.count, "a commit written in one round trip commits every message")
        // The states in the order `lockStates` takes them, which the update follows: two
        // commits sharing rows then wait for one another instead of deadlocking.
        let sorted = states.pairs.sorted { a, b in
            PGSQL.lockOrder((pairs.unique[a].bot, pairs.unique[a].conversation), (pairs.unique[b].bot, pairs.unique[b].conversation))
        }
        var out: [Statement] = [(sql.commitStates, states.params(sorted) + [
            PGText.array(sorted.map { Int64(w.version[$0]) }),
            "{" + sorted.map { w.exists[$0] ? "t" : "f" }.joined(separator: ",") + "}",
            pairs.batchBots, PGText.array(batch.map(\.inbound.seq)),
        ])]
        // The conversations' rows locked as the two-round-trip commit locks them (sorted, and
        // `FOR UPDATE`: the update's own lock would not wait for a helpdesk's insert of an
        // agent's message that holds the row's key-share lock), before the agent check.
        if pairs.agentCheck, let lock = sql.lockConversations { out.append((lock, [pairs.agentConversations])) }
        // A person who took a conversation meanwhile is seen before the rows are written.
        if pairs.agentCheck, let owners = sql.expectOwners { out.append((owners, [pairs.agentConversations, pairs.agentOwners])) }
        out += conversationStatements(w.commits)
        if pairs.agentCheck { out.append((sql.expectAgents, [pairs.agentConversations, pairs.agentLows])) }
        out += w.handoffs.rounds.flatMap(handoffStatements)
        out += outgoingStatements(w.commits, w.overtaken)
        out.append(markDone(w.commits, reason: nil, pairs))
        return out
    }

    /// 6. Conversations: the last state of each.
    private func conversationStatements(_ committed: [Int]) -> [Statement] {
        guard let q = sql.updateConversations else { return [] }
        let l = sql.l
        var last: [String: Int] = [:]   // the conversation's last commit
        var first: [String: Int] = [:]
        var order: [String] = []
        for i in committed {
            let c = batch[i].inbound.conversationID
            if last[c] == nil { order.append(c); first[c] = i }
            last[c] = i
        }
        var params: [String?] = [PGText.array(order)]
        let lastOf = order.map { last[$0]! }
        // Each field read in place (a copy of each state retains every string in it).
        for w in sql.conversationWrites {
            let values = switch w.param {
            case "owner": PGText.array(lastOf) { i in l.ownerValues[batch[i].state.owner.rawValue] ?? batch[i].state.owner.rawValue }
            case "assigned": PGText.array(lastOf) { batch[$0].state.owner == .bot ? "false" : "true" }
            case "count": PGText.array(lastOf) { String(batch[$0].state.customerMessages) }
            case "tags": PGText.array(lastOf) { i in Self.json { $0.stringArray(batch[i].state.tags) } }
            case "metadata": PGText.array(lastOf) { i in Self.json { $0.stringMap(batch[i].state.metadata) } }
            default: PGText.array(lastOf) { batch[$0].state.customerID }
            }
            params.append(values)
        }
        let now = Date().timeIntervalSince1970
        params.append(PGText.array(order.map { _ in now }))
        if l.readsOwnership {
            // The owner the conversation's first commit decided from, and whether its last
            // leaves the bot from there: then the handoff values are written.
            let from = order.map { batch[first[$0]!].expectedOwner ?? .bot }
            params.append(PGText.array(from.map(\.rawValue)))
            params.append("{" + zip(order, from).map { c, o in o == .bot && batch[last[c]!].state.owner != .bot ? "t" : "f" }
                .joined(separator: ",") + "}")
        }
        return [(q, params)]
    }

    /// 7. Replies and notices, unless an agent wrote after the inbound message. 8. Agent
    /// notifications.
    private func outgoingStatements(_ committed: [Int], _ overtaken: [Bool]) -> [Statement] {
        let l = sql.l
        var out: [Statement] = []
        // (commit, index among its replies or notifications): each field is read in place.
        var replies: [(commit: Int, index: Int)] = []
        for (i, over) in zip(committed, overtaken) where !over {
            for j in batch[i].outgoing.indices { replies.append((i, j)) }
        }
        if !replies.isEmpty {
            func texts(_ field: (OutgoingMessage) -> String?) -> String { PGText.array(replies) { field(batch[$0.commit].outgoing[$0.index]) } }
            out.append((sql.insertOutgoing, [
                texts { $0.idempotencyKey }, texts { $0.conversationID }, texts { $0.from == .system ? l.systemValue : l.botValue },
                texts { $0.senderID }, texts { $0.senderName }, texts { $0.text },
                PGText.array(replies.lazy.map { batch[$0.commit].outgoing[$0.index].at.timeIntervalSince1970 }), texts { $0.ruleID },
                texts { QuickReply.json($0.quickReplies) },
            ] + (l.writesFromInbound ? [PGText.array(replies.map { batch[$0.commit].inbound.seq })] : [])))
        }
        var notes: [(commit: Int, index: Int)] = []
        for i in committed {
            for j in batch[i].notifications.indices { notes.append((i, j)) }
        }
        if !notes.isEmpty {
            func texts(_ field: (AgentNotification) -> String?) -> String { PGText.array(notes) { field(batch[$0.commit].notifications[$0.index]) } }
            out.append((sql.insertNotifications, [
                PGText.array(notes) { batch[$0.commit].bot }, texts { $0.idempotencyKey },
                texts { $0.conversationID }, texts { $0.queue }, texts { $0.reason }, texts { $0.text },
                texts { $0.customerName }, texts { $0.lastMessage },
                "{" + notes.map { batch[$0.commit].notifications[$0.index].isHandoff ? "t" : "f" }.joined(separator: ",") + "}",
                PGText.array(notes.lazy.map { batch[$0.commit].notifications[$0.index].at.timeIntervalSince1970 }),
            ]))
        }
        return out
    }

    /// 9. States: the last of each conversation, with the watermark; new ones inserted, the
    /// others (locked) updated.
    private func stateStatements(_ committed: [Int], _ pairs: Pairs, exists: [Bool], replacing: [Int: ConversationState]) -> [Statement] {
        var states = StateRows(self, committed, pairs)
        states.replacing = replacing
        var out: [Statement] = []
        for update in [false, true] {
            let group = states.pairs.filter { exists[$0] == update }
            if group.isEmpty { continue }
            out.append((update ? sql.updateStates : sql.insertStates, states.params(group)))
        }
        return out
    }

    /// The states the committed commits write: each pair's last committed state, with its
    /// watermark (the newest inbound seq committed).
    private struct StateRows {
        let commit: PGCommit
        let all: Pairs
        /// The pairs written, in batch order.
        var pairs: [Int] = []
        var last: [Int]   // each pair's last commit
        var watermark: [Int64]
        /// By pair, a state written instead of its last commit's.
        var replacing: [Int: ConversationState] = [:]

        init(_ commit: PGCommit, _ committed: [Int], _ all: Pairs) {
            self.commit = commit
            self.all = all
            last = [Int](repeating: -1, count: all.unique.count)
            watermark = [Int64](repeating: 0, count: all.unique.count)
            for i in committed {
                let k = all.of[i]
                if last[k] < 0 { pairs.append(k) }
                last[k] = i
                watermark[k] = max(watermark[k], commit.batch[i].inbound.seq)
            }
        }

        /// The parameters of `PGSQL.insertStates` for the pairs `group`.
        func params(_ group: [Int]) -> [String?] {
            let batch = commit.batch
            let every = group.count == all.unique.count && group.indices.allSatisfy { group[$0] == $0 }
            return [
                every ? all.bots : PGText.array(group.lazy.map { all.unique[$0].bot }),
                every ? all.conversations : PGText.array(group.lazy.map { all.unique[$0].conversation }),
                PGText.array(group.map { Int64(batch[last[$0]].state.version) }),
                PGText.array(group.lazy.map { batch[last[$0]].state.owner.rawValue }),
                PGText.array(group.map { watermark[$0] }),
                PGText.array(group.lazy.map { PostgresStore.encodeState(replacing[$0] ?? batch[last[$0]].state) }),
                PGText.array(group.lazy.map { batch[last[$0]].ruleSetVersion }),
            ]
        }
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
        // Commits by index, each field read in place.
        let ends = round.compactMap { if case let .close(i) = $0 { i } else { nil } }
        if !ends.isEmpty {
            out.append((sql.closeHandoffs, [PGText.array(ends) { batch[$0].bot }, PGText.array(ends) { batch[$0].inbound.conversationID }]))
        }
        let opens = round.compactMap { if case let .open(i) = $0 { i } else { nil } }
        if !opens.isEmpty {
            // Each open's handoff notification and system notice (nil: none).
            let handoff = opens.map { i in batch[i].notifications.firstIndex { $0.isHandoff }.map { (i, $0) } }
            let notice = opens.map { i in batch[i].outgoing.firstIndex { $0.from == .system }.map { (i, $0) } }
            out.append((sql.openHandoffs, [
                PGText.array(opens) { batch[$0].bot }, PGText.array(opens) { batch[$0].inbound.conversationID },
                PGText.array(opens) { "\(batch[$0].bot):\(batch[$0].inbound.id):handoff" },
                PGText.array(opens) { batch[$0].inbound.id },
                PGText.array(handoff) { $0.map { batch[$0.0].notifications[$0.1].queue } },
                PGText.array(handoff) { $0.map { batch[$0.0].notifications[$0.1].reason } },
                PGText.array(opens) { batch[$0].state.customerName },
                PGText.array(notice) { $0.map { batch[$0.0].outgoing[$0.1].ruleID } },
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
