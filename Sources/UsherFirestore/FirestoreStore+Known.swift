import Foundation
import UsherStore

/// What the intake has read, kept so that a commit checks its conversation against it instead of
/// reading the conversation's messages again (one query per conversation per batch cost the
/// emulator as much as three commits; BENCHMARKS.md, "The worker on Firestore").
///
/// The intake reads every message of every conversation in (time, name) order: the sweep the
/// look-back behind the position, then the pages after it. Over that range, as of each read,
/// `Known` holds all of them. A commit whose message lies in the range, and whose look-back
/// does too, takes its conversation's messages from here; before the batch's commits one query
/// reads what was written after the range (an agent's message since the page). Anything else —
/// a message swept late, a range broken by a re-read, a commit from outside the worker — reads
/// the conversation as before (`view(_:state:)`).
///
/// What this leaves open is what the per-conversation query left open, over a longer window: a
/// message written late with a time inside the range (a phone that was offline) is seen by the
/// next sweep, not by the commits before it; each sweep starts the range afresh.
struct Known {
    /// Every message with a time from `from` up to `to` was read (as of its read).
    var from: Date
    var to: FirestoreStore.Position?
    /// By conversation, by message id.
    var messages: [String: [String: (StoredMessage, FirestoreStore.Position)]] = [:]
    var count = 0

    /// More messages than this (a burst within one look-back) and the range is dropped: commits
    /// read their conversations until the next sweep.
    static let capacity = 200_000

    init(from: Date, to: FirestoreStore.Position?) {
        self.from = from
        self.to = to
    }

    mutating func add(_ found: [(StoredMessage, FirestoreStore.Position)]) {
        for (m, p) in found where messages[m.conversationID, default: [:]].updateValue((m, p), forKey: m.id) == nil {
            count += 1
        }
    }

    /// Forgets messages before `cut`; the range then starts there.
    mutating func forget(before cut: Date) {
        guard cut > from else { return }
        from = cut
        for (conversation, byID) in messages {
            let kept = byID.filter { $0.value.1.date >= cut }
            count -= byID.count - kept.count
            messages[conversation] = kept.isEmpty ? nil : kept
        }
    }

    /// The next `limit` messages after `after`, in the intake's order, when the range holds
    /// that many; nil when it does not start at or before `after` or holds fewer after it. Only
    /// a whole page: the range ends where a read stopped, and newer messages may lie past it — a
    /// short page served from here (Usher's own replies, which the position does not pass) would
    /// be all the intake saw until the next sweep (every reply 1.5–4.6 s late at 50 messages a
    /// second, `usher-firestore-bench --only latency`).
    func page(after: FirestoreStore.Position?, limit: Int) -> [(StoredMessage, FirestoreStore.Position)]? {
        guard let to else { return nil }
        if let after {
            guard after.date >= from, after < to else { return nil }
        } else if from != .distantPast {
            return nil
        }
        var out: [(StoredMessage, FirestoreStore.Position)] = []
        for byID in messages.values {
            for (m, p) in byID.values where p <= to && after.map({ p > $0 }) ?? true { out.append((m, p)) }
        }
        guard out.count >= limit else { return nil }
        out.sort { $0.1 < $1.1 }
        return Array(out.prefix(limit))
    }

    /// The conversation's messages from `floor`, if the range holds all of them up to `inbound`.
    func messages(of conversation: String, from floor: Date, through inbound: FirestoreStore.Position)
        -> [(StoredMessage, FirestoreStore.Position)]? {
        guard from <= floor, let to, inbound <= to else { return nil }
        return messages[conversation, default: [:]].values.filter { $0.1.date >= floor }
    }
}

extension FirestoreStore {
    /// Keeps what a read of the intake found. A read that starts inside the range (the page
    /// after the last, or a re-read) extends it; a sweep starts one (joined to the old range
    /// when they touch); any other read drops it. Pruned by the commits (`refreshKnown`).
    func remember(bot: String, after: Position?, swept: Bool, found: [(StoredMessage, Position)], end: Position?) {
        let lookback = layout.lookback.seconds
        memory.withLock { m in
            let old = m.known[bot]
            let inside = old.map { k in after.map { a in k.to.map { a <= $0 } ?? false && a.date >= k.from } ?? false } ?? false
            var known: Known
            if inside, let old {
                known = old
                if swept, let after { known.from = min(known.from, after.date.addingTimeInterval(-lookback)) }
            } else if after == nil || swept {
                known = Known(from: after.map { $0.date.addingTimeInterval(-lookback) } ?? .distantPast, to: end)
            } else {
                m.known[bot] = nil
                return
            }
            if let end, known.to.map({ end > $0 }) ?? true { known.to = end }
            known.add(found)
            m.known[bot] = known.count > Known.capacity ? nil : known
        }
    }

    /// Before a batch's commits: the range of each bot read on to the newest message (an agent's
    /// message since the page; during a backlog, everything after the page, read once), and
    /// what no commit from this batch on needs forgotten. Returns the bots whose range now
    /// reaches the newest message: their commits check against it. A backlog longer than
    /// `refreshLimit` is read on by the next batches, whose commits read their conversations
    /// until the range catches up.
    func refreshKnown(_ batch: [Commit]) async throws -> Set<String> {
        var current: Set<String> = []
        for bot in Set(batch.map(\.bot)) {
            guard var to = memory.withLock({ $0.known[bot]?.to }) else { continue }
            if let oldest = batch.lazy.filter({ $0.bot == bot }).map(\.inbound.at).min() {
                let cut = oldest.addingTimeInterval(-layout.lookback.seconds - 1)
                memory.withLock { $0.known[bot]?.forget(before: cut) }
            }
            var read = 0, reachedNewest = false
            while read < Self.refreshLimit {
                var q = intakeQuery()
                q.startAt = ([to.time, .reference(to.name)], false)
                q.limit = 1000
                let docs = try await call { try await self.rest.runQuery(q) }
                let fresh = docs.compactMap(message)
                // Where this read ended, non-message documents included.
                let end = docs.last.flatMap { d in d.fields[layout.time].flatMap { t in layout.date(t).map { Position(time: t, date: $0, name: d.name) } } }
                read += docs.count
                // Onto a range that still reaches where this read started (a read of the
                // intake meanwhile may have dropped it).
                let extended = memory.withLock { m -> Bool in
                    guard let k = m.known[bot], let kTo = k.to, kTo >= to else { return false }
                    m.known[bot]?.add(fresh)
                    if let end, end > kTo { m.known[bot]?.to = end }
                    return true
                }
                guard extended else { break }
                if let end { to = end }
                if docs.count < 1000 { reachedNewest = true; break }
            }
            if reachedNewest { current.insert(bot) }
        }
        return current
    }

    /// The most a batch reads ahead of the intake before its commits.
    static let refreshLimit = 5_000

    /// `found` without what lies at or before the bot's start (messages of the start's instant).
    func afterStart(_ found: [(StoredMessage, Position)], bot: String) -> [(StoredMessage, Position)] {
        guard let since = memory.withLock({ $0.since[bot] }) else { return found }
        return found.filter { $0.1 > since }
    }

    /// How far back a commit's check reaches: the look-back behind its conversation's newest done
    /// message (all of it before the first is done), never more than the look-back behind the
    /// message itself — an older message is past answering (the sweep no longer finds it) — and
    /// never before the bot's start.
    func checkFloor(_ c: Commit, state: FirestoreDocument?) -> Date {
        let lookback = layout.lookback.seconds
        let floor = DoneMarks(state).newest.map { min($0, c.inbound.at).addingTimeInterval(-lookback) }
        // Nor before where the bot started: what was there is not for it to answer.
        let since = memory.withLock { $0.since[c.bot]?.date } ?? .distantPast
        return max(floor ?? .distantPast, c.inbound.at.addingTimeInterval(-lookback), since)
    }

    /// The conversation's messages for `c`'s check from what the intake read, if it holds them.
    func knownView(_ c: Commit, state: FirestoreDocument?) -> View? {
        guard let inbound = c.inbound.position(in: self) else { return nil }
        let floor = checkFloor(c, state: state)
        guard var found = memory.withLock({ $0.known[c.bot]?.messages(of: c.inbound.conversationID, from: floor, through: inbound) })
        else { return nil }
        found = afterStart(found, bot: c.bot)
        return View(messages: found, latest: found.map(\.1.date).max() ?? c.inbound.at)
    }
}
