import Foundation
import UsherStore

extension SQLiteStore {
    /// Hands every action committed since the last delivery on `channel` to `deliver` — replies
    /// and notices in `seq` order, then handoffs, then notifications, then (with `tags`) tag
    /// changes, at most `limit` of each kind per call of `deliver` — and records them as delivered in the same `BEGIN IMMEDIATE`
    /// transaction, on the connection's thread: two deliveries on one channel never overlap,
    /// across processes too, and an action is handed on once. If the process dies after
    /// `deliver` returned but before the transaction committed, the last chunk is handed on again
    /// after a restart (consumers deduplicate on `StoreAction.idempotencyKey`). When `deliver`
    /// throws, nothing is recorded and the error is rethrown. Returns how many were delivered.
    ///
    /// `deliver` runs on the connection's thread, so it may block (write to a pipe).
    @discardableResult
    public func deliverActions(channel: String, limit: Int = 1024, tags: Bool = false,
                               _ deliver: @escaping @Sendable ([StoreAction]) throws -> Void) async throws -> Int {
        var total = 0
        while true {
            let n = try await perform { db in
                try Self.transaction(db) { try Self.deliverChunk(db, channel: channel, limit: limit, tags: tags, deliver) }
            }
            total += n
            if n == 0 { return total }
        }
    }

    /// The last `seq` delivered on `channel` per stream (`messages`, `handoffs`, `notifications`).
    public func deliveryMarks(channel: String) async throws -> [String: Int64] {
        try await perform { db in try Self.marks(db, channel: channel) }
    }

    private static func marks(_ db: SQLiteConnection, channel: String) throws -> [String: Int64] {
        let s = try db.statement(.deliveryMarks)
        defer { s.reset() }
        s.bind(1, channel)
        var out: [String: Int64] = [:]
        while try s.step() { out[s.text(0)] = s.int64(1) }
        return out
    }

    private static func deliverChunk(_ db: SQLiteConnection, channel: String, limit: Int, tags: Bool,
                                     _ deliver: ([StoreAction]) throws -> Void) throws -> Int {
        let marks = try marks(db, channel: channel)
        var actions: [StoreAction] = []
        var next = marks

        let m = try db.statement(.outgoingAfter)
        defer { m.reset() }
        m.bind(1, marks["messages"] ?? 0)
        m.bind(2, limit)
        while try m.step() {
            let message = Self.message(m)
            actions.append(.message(message))
            next["messages"] = message.seq
        }

        let h = try db.statement(.handoffsAfter)
        defer { h.reset() }
        h.bind(1, marks["handoffs"] ?? 0)
        h.bind(2, limit)
        while try h.step() {
            let record = HandoffRecord(id: h.int64(0), bot: h.text(1), conversationID: h.text(2), idempotencyKey: h.text(3),
                                       messageID: h.text(4), queue: h.optionalText(5), reason: h.optionalText(6),
                                       customerName: h.optionalText(7), ruleID: h.optionalText(8), waitingSince: h.date(9))
            actions.append(.handoff(record))
            next["handoffs"] = record.id
        }

        let n = try db.statement(.notifications)
        defer { n.reset() }
        n.bind(1, marks["notifications"] ?? 0)
        n.bind(2, limit)
        while try n.step() {
            let notification = Self.notification(n)
            actions.append(.notification(notification))
            next["notifications"] = notification.seq
        }

        if tags {
            for change in try tagChanges(db, after: marks[tagStream] ?? 0, limit: limit) {
                actions.append(.tags(change))
                next[tagStream] = change.seq
            }
        }

        if actions.isEmpty { return 0 }
        try deliver(actions)
        let u = try db.statement(.markDelivered)
        defer { u.reset() }
        for (stream, seq) in next where marks[stream] != seq {
            u.bind(1, channel)
            u.bind(2, stream)
            u.bind(3, seq)
            _ = try u.step()
            u.reset()
        }
        return actions.count
    }
}
