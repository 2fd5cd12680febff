import Foundation
import UsherEngine
import UsherJSON
import UsherStore

extension SQLiteStore {
    /// The conversation row's writes, in order: the update of a known row, else the upsert.
    private static let conversationWrites = [Query.updateConversationOnCommit, .upsertConversationOnCommit]

    /// Checks and writes one commit inside the caller's transaction (or savepoint), on the
    /// connection's thread. The checks come first and write nothing, so a result other than
    /// `.committed` leaves the database as it was. In a batch, `links` says whether a commit
    /// before it in its conversation was not written (then it is not either, `BatchLinks`) and
    /// learns its result.
    static func write(_ c: Commit, _ db: SQLiteConnection, now: Date, links: inout BatchLinks<String>) throws -> CommitResult {
        let result = try write(c, db, now: now, unwritten: links.unwritten(c))
        links.record(c, result)
        return result
    }

    static func write(_ c: Commit, _ db: SQLiteConnection, now: Date, unwritten: CommitResult? = nil) throws -> CommitResult {
        let conversation = c.inbound.conversationID

        // 1. The stored version, owner and per-conversation watermark.
        var exists = false
        var version = 0
        var owner: Owner?
        var lastSeq: Int64 = 0
        do {
            let s = try db.statement(.stateMeta)
            defer { s.reset() }
            s.bind(1, c.bot)
            s.bind(2, conversation)
            if try s.step() {
                exists = true
                version = s.int(0)
                owner = Owner(rawValue: s.text(1))
                lastSeq = s.int64(2)
            }
        }

        // 2. Done already (at or below the watermark): at-least-once intake, exactly-once effects.
        if c.inbound.seq <= lastSeq { return .duplicate }
        if let unwritten { return unwritten }

        // 3. Per-conversation order: no inbound message of the conversation between the watermark
        //    and this one (any there is not done).
        do {
            let s = try db.statement(.earlierUndone)
            defer { s.reset() }
            s.bind(1, conversation)
            s.bind(2, lastSeq)
            s.bind(3, c.inbound.seq)
            if try s.step() { return .outOfOrder }
        }

        // 4. Compare-and-set.
        if version != c.expectedVersion { return .conflict }

        let state = c.state
        var w = db.scratch
        db.scratch = JSONWriter(capacity: 0)   // so that `w` owns its buffer (no copy on write)
        defer { db.scratch = w }

        // 5. The conversation row first (foreign keys point at it), mirroring the seed's model.
        //    It exists when the backend appended the message; the upsert covers the rest. Neither
        //    writes a row whose fields do not change.
        w.reset()
        w.stringArray(state.tags)
        let tagsEnd = w.bytes.count
        w.stringMap(state.metadata)
        for query in Self.conversationWrites {
            let s = try db.statement(query)
            defer { s.reset() }
            s.bind(1, conversation)
            s.bind(2, state.customerID)
            s.bind(3, state.channel)
            s.bind(4, state.locale)
            s.bind(5, state.owner.rawValue)
            s.bind(6, state.owner != .bot)
            s.bind(7, state.customerMessages)
            w.bytes.withUnsafeBufferPointer { b in
                s.bind(8, bytes: UnsafeBufferPointer(rebasing: b[..<tagsEnd]))
                s.bind(9, bytes: UnsafeBufferPointer(rebasing: b[tagsEnd...]))
            }
            s.bind(10, now)
            _ = try s.step()
            if db.changes > 0 { break }
        }

        // 6. Replies and notices; a key already written keeps its row. None when an agent wrote
        //    after the inbound message: the bot never speaks over a human.
        var overtaken = false
        if !c.outgoing.isEmpty {
            let s = try db.statement(.agentAfter)
            defer { s.reset() }
            s.bind(1, conversation)
            s.bind(2, c.inbound.seq)
            overtaken = try s.step()
        }
        if !c.outgoing.isEmpty, !overtaken {
            let s = try db.statement(.insertOutgoing)
            for o in c.outgoing {
                defer { s.reset() }
                s.bind(1, o.idempotencyKey)
                s.bind(2, o.conversationID)
                s.bind(3, o.from.rawValue)
                s.bind(4, o.senderID)
                s.bind(5, o.senderName)
                s.bind(6, o.text)
                s.bind(7, o.at)
                s.bind(8, o.ruleID)
                s.bind(9, QuickReply.json(o.quickReplies))
                _ = try s.step()
            }
        }

        // 7. Agent notifications.
        if !c.notifications.isEmpty {
            let s = try db.statement(.insertNotification)
            for n in c.notifications {
                defer { s.reset() }
                s.bind(1, c.bot)
                s.bind(2, n.idempotencyKey)
                s.bind(3, n.conversationID)
                s.bind(4, n.queue)
                s.bind(5, n.reason)
                s.bind(6, n.text)
                s.bind(7, n.customerName)
                s.bind(8, n.lastMessage)
                s.bind(9, n.isHandoff)
                s.bind(10, n.at)
                _ = try s.step()
            }
        }

        // 7b. What the tag actions changed, for a channel that mirrors tags in its backend.
        if !c.tagsAdded.isEmpty || !c.tagsRemoved.isEmpty {
            let s = try db.statement(.insertTagChange)
            defer { s.reset() }
            w.reset()
            w.stringArray(c.tagsAdded)
            let addedEnd = w.bytes.count
            w.stringArray(c.tagsRemoved)
            s.bind(1, c.bot)
            s.bind(2, conversation)
            s.bind(3, "\(c.bot):\(c.inbound.id):tags")
            s.bind(4, c.inbound.id)
            w.bytes.withUnsafeBufferPointer { b in
                s.bind(5, bytes: UnsafeBufferPointer(rebasing: b[..<addedEnd]))
                s.bind(6, bytes: UnsafeBufferPointer(rebasing: b[addedEnd...]))
            }
            s.bind(7, now)
            _ = try s.step()
        }

        // 8. The inbox: a handoff opens when the owner becomes `waiting`, ends when it leaves it.
        if state.owner == .waiting, owner != .waiting {
            let handoff = c.notifications.first { $0.isHandoff }
            let s = try db.statement(.openHandoff)
            defer { s.reset() }
            s.bind(1, c.bot)
            s.bind(2, conversation)
            s.bind(3, "\(c.bot):\(c.inbound.id):handoff")
            s.bind(4, c.inbound.id)
            s.bind(5, handoff?.queue)
            s.bind(6, handoff?.reason)
            s.bind(7, state.customerName)
            s.bind(8, c.outgoing.first { $0.from == .system }?.ruleID)
            s.bind(9, now)
            _ = try s.step()
        } else if state.owner != .waiting, owner == .waiting {
            let s = try db.statement(.closeHandoff)
            defer { s.reset() }
            s.bind(1, c.bot)
            s.bind(2, conversation)
            s.bind(3, now)
            _ = try s.step()
        }

        // 9. The state, with the watermark: the done mark of this message, and the order check of
        //    the next one.
        do {
            let s = try db.statement(exists ? .updateState : .insertState)
            defer { s.reset() }
            s.bind(1, c.bot)
            s.bind(2, conversation)
            s.bind(3, state.version)
            s.bind(4, state.owner.rawValue)
            s.bind(5, c.inbound.seq)
            w.reset()
            StateJSON.encode(state, into: &w)
            w.bytes.withUnsafeBufferPointer { s.bind(6, bytes: $0) }
            s.bind(7, c.ruleSetVersion)
            s.bind(8, now)
            _ = try s.step()
            db.decoded.wrote(bot: c.bot, conversation: conversation, text: w.bytes, state: state)
        }

        return overtaken && !c.outgoing.isEmpty ? .silenced : .committed
    }
}
