import Foundation
import UsherEngine
import UsherStore

/// One group commit in one transaction: read what decides each commit's result (done marks,
/// the states — locked —, earlier messages not done, agents' messages), classify the commits in
/// order as `ChatStore.commit(batch:)` says, then write the committed ones with one statement
/// per table. A state or done mark created by another worker in the meantime shows up as fewer
/// rows written: the transaction is rolled back and the batch classified again.
struct PGCommit {
    let sql: PGSQL
    let batch: [Commit]

    private struct Pair: Hashable { var bot: String; var conversation: String }

    /// The error that sends a batch round again.
    static let race = StoreError("pg-race", "another worker committed part of this batch first", transient: true)

    static func lostRace(_ error: StoreError) -> Bool { error.code == race.code || PGError.isUniqueViolation(error) }

    func write(_ db: PGConnection) throws -> [CommitResult] {
        try PGSession.transaction(db) { try writeInTransaction(db) }
    }

    private func writeInTransaction(_ db: PGConnection) throws -> [CommitResult] {
        let l = sql.l
        let pairs = uniquePairs()

        // 1. Done marks.
        var done = Set<Pair>()   // (bot, message id)
        do {
            let r = try db.execute(sql.processed, [PGText.array(batch.map(\.bot)), PGText.array(batch.map { PGText.clean($0.inbound.id) })],
                                   prepare: true)
            for i in 0..<r.rows { done.insert(Pair(bot: r.string(i, 0), conversation: r.string(i, 1))) }
        }

        // 2. The states, locked until the transaction ends.
        var stored: [Pair: (version: Int, owner: Owner?, lastSeq: Int64)] = [:]
        do {
            let r = try db.execute(sql.lockStates, [PGText.array(pairs.map(\.bot)), PGText.array(pairs.map(\.conversation))],
                                   prepare: true)
            for i in 0..<r.rows {
                stored[Pair(bot: r.string(i, 0), conversation: r.string(i, 1))] =
                    (r.int(i, 2), Owner(rawValue: r.string(i, 3)), r.int64(i, 4))
            }
        }

        // 3. Earlier inbound messages not done, between each state's watermark and the batch.
        var undone: [Pair: [Int64]] = [:]
        do {
            var high: [Pair: Int64] = [:]
            for c in batch { high[pair(c)] = max(high[pair(c)] ?? 0, c.inbound.seq) }
            let r = try db.execute(sql.undoneBetween, [
                PGText.array(pairs.map(\.bot)), PGText.array(pairs.map(\.conversation)),
                PGText.array(pairs.map { stored[$0]?.lastSeq ?? 0 }), PGText.array(pairs.map { high[$0] ?? 0 }),
            ], prepare: true)
            for i in 0..<r.rows { undone[Pair(bot: r.string(i, 0), conversation: r.string(i, 1)), default: []].append(r.int64(i, 2)) }
        }

        // 4. The newest agent message after the oldest inbound message of each conversation.
        var agentSeq: [String: Int64] = [:]
        if batch.contains(where: { !$0.outgoing.isEmpty }) {
            var low: [String: Int64] = [:]
            for c in batch { low[c.inbound.conversationID] = min(low[c.inbound.conversationID] ?? .max, c.inbound.seq) }
            let conversations = Array(low.keys).sorted()
            if let lock = sql.lockConversations { try db.execute(lock, [PGText.array(conversations)], prepare: true) }
            let r = try db.execute(sql.agentAfter, [PGText.array(conversations), PGText.array(conversations.map { low[$0]! })],
                                   prepare: true)
            for i in 0..<r.rows { agentSeq[r.string(i, 0)] = r.int64(i, 1) }
        }

        // 5. Classify in order; later commits see earlier ones.
        var results: [CommitResult] = []
        var version: [Pair: Int] = stored.mapValues(\.version)
        var owner: [Pair: Owner?] = stored.mapValues(\.owner)
        var doneSeqs: [Pair: Set<Int64>] = [:]
        var committed: [Commit] = []
        var overtaken: [Bool] = []
        var handoffs = HandoffRounds()
        for c in batch {
            let p = pair(c)
            let mark = Pair(bot: c.bot, conversation: PGText.clean(c.inbound.id))
            if done.contains(mark) { results.append(.duplicate); continue }
            let earlier = (undone[p] ?? []).contains { $0 < c.inbound.seq && !(doneSeqs[p]?.contains($0) ?? false) }
            if earlier { results.append(.outOfOrder); continue }
            if (version[p] ?? 0) != c.expectedVersion { results.append(.conflict); continue }
            results.append(.committed)
            done.insert(mark)
            doneSeqs[p, default: []].insert(c.inbound.seq)
            committed.append(c)
            overtaken.append((agentSeq[c.inbound.conversationID] ?? 0) > c.inbound.seq)
            version[p] = c.state.version
            let before = owner[p] ?? nil
            owner[p] = c.state.owner
            // The inbox: a handoff opens when the owner becomes `waiting`, ends when it leaves it.
            if c.state.owner == .waiting, before != .waiting {
                handoffs.add(.open(c), p.conversation)
            } else if c.state.owner != .waiting, before == .waiting {
                handoffs.add(.close(c), p.conversation)
            }
        }
        if committed.isEmpty { return results }
        for round in handoffs.rounds { try writeHandoffs(db, round) }

        // 6. Conversations: the last state of each.
        if let q = sql.updateConversations {
            var last: [String: (ConversationState, Double)] = [:]
            var order: [String] = []
            for c in committed {
                if last[c.inbound.conversationID] == nil { order.append(c.inbound.conversationID) }
                last[c.inbound.conversationID] = (c.state, Date().timeIntervalSince1970)
            }
            var params: [String?] = [PGText.array(order)]
            for w in sql.conversationWrites {
                params.append(PGText.array(optional: order.map { c -> String? in
                    let s = last[c]!.0
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
            params.append(PGText.array(order.map { last[$0]!.1 }))
            try db.execute(q, params, prepare: true)
        }

        // 7. Replies and notices, unless an agent wrote after the inbound message.
        let outgoing = zip(committed, overtaken).flatMap { c, over in over ? [] : c.outgoing }
        if !outgoing.isEmpty {
            try db.execute(sql.insertOutgoing, [
                PGText.array(outgoing.map(\.idempotencyKey)), PGText.array(outgoing.map(\.conversationID)),
                PGText.array(outgoing.map { $0.from == .system ? l.systemValue : l.botValue }),
                PGText.array(outgoing.map(\.senderID)), PGText.array(outgoing.map(\.senderName)),
                PGText.array(outgoing.map(\.text)), PGText.array(outgoing.map { $0.at.timeIntervalSince1970 }),
                PGText.array(outgoing.map(\.ruleID)),
            ], prepare: true)
        }

        // 8. Agent notifications.
        let notes = committed.flatMap { c in c.notifications.map { (c.bot, $0) } }
        if !notes.isEmpty {
            try db.execute(sql.insertNotifications, [
                PGText.array(notes.map(\.0)), PGText.array(notes.map(\.1.idempotencyKey)),
                PGText.array(notes.map(\.1.conversationID)), PGText.array(notes.map(\.1.queue)),
                PGText.array(notes.map(\.1.reason)), PGText.array(notes.map(\.1.text)),
                PGText.array(optional: notes.map(\.1.customerName)), PGText.array(notes.map(\.1.lastMessage)),
                "{" + notes.map { $0.1.isHandoff ? "t" : "f" }.joined(separator: ",") + "}",
                PGText.array(notes.map { $0.1.at.timeIntervalSince1970 }),
            ], prepare: true)
        }

        // 9. States: the last of each conversation, with the watermark.
        var finalState: [Pair: (Commit, Int64)] = [:]
        var statePairs: [Pair] = []
        for c in committed {
            let p = pair(c)
            if finalState[p] == nil { statePairs.append(p) }
            finalState[p] = (c, max(finalState[p]?.1 ?? 0, c.inbound.seq))
        }
        for existing in [false, true] {
            let group = statePairs.filter { (stored[$0] != nil) == existing }
            if group.isEmpty { continue }
            let params: [String?] = [
                PGText.array(group.map(\.bot)), PGText.array(group.map(\.conversation)),
                PGText.array(group.map { Int64(finalState[$0]!.0.state.version) }),
                PGText.array(group.map { finalState[$0]!.0.state.owner.rawValue }),
                PGText.array(group.map { finalState[$0]!.1 }),
                PGText.array(group.map { PostgresStore.encodeState(finalState[$0]!.0.state) }),
                PGText.array(group.map { finalState[$0]!.0.ruleSetVersion }),
            ]
            let r = try db.execute(existing ? sql.updateStates : sql.insertStates, params, prepare: true)
            if !existing, r.rows != group.count { throw Self.race }
        }

        // 10. Done marks.
        try markDone(db, committed, reason: nil)
        return results
    }

    /// Handoffs opening and ending, in order, cut into rounds in which each conversation appears
    /// at most once: a round is written with one statement for its ends and one for its opens.
    struct HandoffRounds {
        enum Event { case open(Commit), close(Commit) }
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

    private func writeHandoffs(_ db: PGConnection, _ round: [HandoffRounds.Event]) throws {
        let ends = round.compactMap { if case let .close(c) = $0 { c } else { nil } }
        if !ends.isEmpty {
            try db.execute(sql.closeHandoffs, [PGText.array(ends.map(\.bot)), PGText.array(ends.map(\.inbound.conversationID))],
                           prepare: true)
        }
        let opens = round.compactMap { if case let .open(c) = $0 { c } else { nil } }
        if !opens.isEmpty {
            let handoff = opens.map { c in c.notifications.first { $0.isHandoff } }
            try db.execute(sql.openHandoffs, [
                PGText.array(opens.map(\.bot)), PGText.array(opens.map(\.inbound.conversationID)),
                PGText.array(opens.map { "\($0.bot):\($0.inbound.id):handoff" }),
                PGText.array(opens.map(\.inbound.id)),
                PGText.array(optional: handoff.map { $0?.queue }), PGText.array(optional: handoff.map { $0?.reason }),
                PGText.array(optional: opens.map(\.state.customerName)),
                PGText.array(optional: opens.map { c in c.outgoing.first { $0.from == .system }?.ruleID }),
            ], prepare: true)
        }
    }

    /// Marks the batch's single message done with `reason`, writing nothing else.
    func quarantine(_ db: PGConnection, reason: String) throws -> CommitResult {
        try PGSession.transaction(db) {
            let c = batch[0]
            let r = try db.execute(sql.processed, [PGText.array([c.bot]), PGText.array([PGText.clean(c.inbound.id)])], prepare: true)
            if r.rows > 0 { return .duplicate }
            try markDone(db, [c], reason: reason)
            return .committed
        }
    }

    private func markDone(_ db: PGConnection, _ commits: [Commit], reason: String?) throws {
        let r = try db.execute(sql.insertProcessed, [
            PGText.array(commits.map(\.bot)), PGText.array(commits.map { PGText.clean($0.inbound.id) }),
            PGText.array(commits.map(\.inbound.seq)), PGText.array(commits.map(\.inbound.conversationID)),
            PGText.array(optional: commits.map { _ in reason }),
        ], prepare: true)
        if r.rows != commits.count { throw Self.race }
    }

    private func pair(_ c: Commit) -> Pair { Pair(bot: c.bot, conversation: PGText.clean(c.inbound.conversationID)) }

    private func uniquePairs() -> [Pair] {
        var seen = Set<Pair>()
        return batch.map(pair).filter { seen.insert($0).inserted }
    }

    static func json(_ write: (inout JSONWriter) -> Void) -> String {
        var w = JSONWriter(capacity: 64)
        write(&w)
        return w.text
    }
}
