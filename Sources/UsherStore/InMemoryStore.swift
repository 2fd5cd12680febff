public import Foundation
public import UsherEngine

/// The reference implementation of `ChatStore`: everything in memory, behind one lock. Used by
/// tests, `usher replay`-like tools and as the model the conformance suite checks others against.
public final class InMemoryStore: ChatStore {
    private struct Data {
        var messages: [StoredMessage] = []
        var ids: Set<String> = []
        var keys: Set<String> = []
        var done: [String: Set<String>] = [:]           // bot → inbound ids
        var cursors: [String: Int64] = [:]
        var states: [String: ConversationState] = [:]   // "bot\0conversation"
        var leases: [String: (worker: String, until: Date)] = [:]
        var notifications: [StoredNotification] = []
        var notificationKeys: Set<String> = []
        var conversations: [String: (channel: String?, locale: String?)] = [:]
        var waitingSince: [String: (Date, String?, String?)] = [:]   // "bot\0conversation" → since, queue, reason
        var closed = false
        var info: [String: ConversationInfo] = [:]
    }

    private let data = Locked(Data())
    private let clock: @Sendable () -> Date

    public init(clock: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
    }

    private func locked<T>(_ body: (inout Data) throws -> T) throws -> T {
        try data.withLock { d in
            if d.closed { throw StoreError("closed", "the store is closed") }
            return try body(&d)
        }
    }

    private static func isInbound(_ m: StoredMessage) -> Bool {
        m.kind == .close || m.from == .customer || m.from == .agent
    }

    public func pending(bot: String, after cursor: Int64, limit: Int) async throws -> [StoredMessage] {
        try locked { d in
            let done = d.done[bot] ?? []
            var out: [StoredMessage] = []
            for m in d.messages where m.seq > cursor && Self.isInbound(m) && !done.contains(m.id) {
                var m = m
                (m.channel, m.locale) = d.conversations[m.conversationID] ?? (nil, nil)
                out.append(m)
                if out.count == limit { break }
            }
            return out
        }
    }

    public func waitForChanges(after seq: Int64, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try locked({ ($0.messages.last?.seq ?? 0) > seq }) { return }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    public func cursor(bot: String) async throws -> Int64 {
        try locked { $0.cursors[bot] ?? 0 }
    }

    public func advanceCursor(bot: String) async throws {
        try locked { d in
            let done = d.done[bot] ?? []
            let oldest = d.messages.first { Self.isInbound($0) && !done.contains($0.id) }
            d.cursors[bot] = (oldest?.seq ?? (d.messages.last?.seq ?? 0) + 1) - 1
        }
    }

    public func state(bot: String, conversation: String) async throws -> ConversationState? {
        try locked { $0.states[bot + "\u{0}" + conversation] }
    }

    public func commit(_ c: Commit) async throws -> CommitResult {
        let now = clock()
        return try locked { d in
            let key = c.bot + "\u{0}" + c.inbound.conversationID
            if d.done[c.bot]?.contains(c.inbound.id) == true { return .duplicate }
            let done = d.done[c.bot] ?? []
            if d.messages.contains(where: { $0.conversationID == c.inbound.conversationID && $0.seq < c.inbound.seq
                                            && Self.isInbound($0) && !done.contains($0.id) }) {
                return .outOfOrder
            }
            if (d.states[key]?.version ?? 0) != c.expectedVersion { return .conflict }
            // A human wrote after this message: the bot must not speak over them.
            let overtaken = d.messages.contains { $0.conversationID == c.inbound.conversationID && $0.seq > c.inbound.seq && $0.from == .agent }
            var seq = d.messages.last?.seq ?? 0
            for o in c.outgoing where !d.keys.contains(o.idempotencyKey) && !overtaken {
                seq += 1
                d.keys.insert(o.idempotencyKey)
                d.messages.append(StoredMessage(seq: seq, id: o.idempotencyKey, conversationID: o.conversationID,
                                                from: o.from, senderID: o.senderID, senderName: o.senderName,
                                                text: o.text, at: o.at, ruleID: o.ruleID))
            }
            var nseq = d.notifications.last?.seq ?? 0
            for n in c.notifications where !d.notificationKeys.contains(n.idempotencyKey) {
                nseq += 1
                d.notificationKeys.insert(n.idempotencyKey)
                d.notifications.append(StoredNotification(seq: nseq, bot: c.bot, notification: n))
            }
            let before = d.states[key]?.owner
            if c.state.owner == .waiting, before != .waiting {
                let n = c.notifications.first { $0.isHandoff }
                d.waitingSince[key] = (now, n?.queue, n?.reason)
            } else if c.state.owner != .waiting {
                d.waitingSince[key] = nil
            }
            d.states[key] = c.state
            d.done[c.bot, default: []].insert(c.inbound.id)
            return overtaken && !c.outgoing.isEmpty ? .silenced : .committed
        }
    }

    public func claim(bot: String, conversations: [String], worker: String, until: Date) async throws -> Set<String> {
        let now = clock()
        return try locked { d in
            var held = Set<String>()
            for c in conversations {
                let key = bot + "\u{0}" + c
                if let lease = d.leases[key], lease.worker != worker, lease.until > now { continue }
                d.leases[key] = (worker, until)
                held.insert(c)
            }
            return held
        }
    }

    public func release(bot: String, worker: String, keeping: Set<String>) async throws {
        try locked { d in
            for (k, v) in d.leases where v.worker == worker && k.hasPrefix(bot + "\u{0}")
                && !keeping.contains(String(k.dropFirst(bot.count + 1))) { d.leases[k] = nil }
        }
    }

    @discardableResult
    public func append(_ m: NewMessage) async throws -> StoredMessage {
        try locked { d in
            if d.ids.contains(m.id), let existing = d.messages.first(where: { $0.id == m.id }) { return existing }
            let seq = (d.messages.last?.seq ?? 0) + 1
            let stored = StoredMessage(seq: seq, id: m.id, conversationID: m.conversationID, kind: m.kind, from: m.from,
                                       senderID: m.senderID, senderName: m.senderName, text: m.text, at: m.at)
            d.messages.append(stored)
            d.ids.insert(m.id)
            if d.conversations[m.conversationID] == nil { d.conversations[m.conversationID] = (m.channel, m.locale) }
            if d.info[m.conversationID] == nil {
                d.info[m.conversationID] = ConversationInfo(id: m.conversationID, customerID: nil, channel: m.channel,
                                                            locale: m.locale, createdAt: m.at)
            }
            if m.from == .customer, d.info[m.conversationID]?.customerID == nil {
                d.info[m.conversationID]?.customerID = m.senderID
            }
            return stored
        }
    }

    public func transcript(conversation: String) async throws -> [StoredMessage] {
        try locked { d in d.messages.filter { $0.conversationID == conversation } }
    }

    public func inbox(bot: String) async throws -> [InboxEntry] {
        try locked { d in
            d.waitingSince.compactMap { key, value -> InboxEntry? in
                guard key.hasPrefix(bot + "\u{0}"), let state = d.states[key], state.owner == .waiting else { return nil }
                let last = d.messages.last { $0.conversationID == state.conversationID && $0.from == .customer }
                return InboxEntry(conversationID: state.conversationID, customerName: state.customerName,
                                  queue: value.1, reason: value.2, waitingSince: value.0, lastMessage: last?.text)
            }.sorted { ($0.waitingSince, $0.conversationID) < ($1.waitingSince, $1.conversationID) }
        }
    }

    public func notifications(after seq: Int64, limit: Int) async throws -> [StoredNotification] {
        try locked { d in Array(d.notifications.filter { $0.seq > seq }.prefix(limit)) }
    }

    public func close() async throws {
        data.withLock { $0.closed = true }
    }

    public func latestSeq() async throws -> Int64 {
        try locked { $0.messages.last?.seq ?? 0 }
    }

    public func conversation(_ id: String) async throws -> ConversationInfo? {
        try locked { $0.info[id] }
    }

}
