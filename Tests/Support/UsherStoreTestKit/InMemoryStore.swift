public import Foundation
public import UsherEngine
public import UsherStore

/// The reference implementation of the core `ChatStore`: everything in memory, behind one lock,
/// and nothing but the core (`append` and `transcript` are the tests' backend, not a
/// capability). It runs the worker, which proves the core is enough; its positions are opaque tokens ("m12":
/// after the 12th message written), not sequence numbers, as a store without a global sequence
/// would have them.
public final class InMemoryStore: ChatStore {
    private struct Data {
        var messages: [StoredMessage] = []
        var ids: Set<String> = []
        var keys: Set<String> = []
        var done: [String: Set<String>] = [:]           // bot → inbound ids
        var positions: [String: Int] = [:]              // bot → messages done before this index
        var states: [String: ConversationState] = [:]   // "bot\0conversation"
        var notifications: [StoredNotification] = []
        var notificationKeys: Set<String> = []
        var conversations: [String: (channel: String?, locale: String?)] = [:]
        var closed = false
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

    /// The index in `messages` a position stands for.
    private static func index(_ p: StorePosition) throws -> Int {
        if p.token.isEmpty { return 0 }
        guard p.token.hasPrefix("m"), let i = Int(p.token.dropFirst()), i >= 0 else {
            throw StoreError("bad-position", "'\(p.token)' is not a position of this store")
        }
        return i
    }

    private static func position(_ index: Int) -> StorePosition { index == 0 ? .start : StorePosition("m\(index)") }

    public func position(bot: String) async throws -> StorePosition {
        try locked { Self.position($0.positions[bot] ?? 0) }
    }

    public func pending(bot: String, after position: StorePosition, limit: Int) async throws -> Page {
        let from = try Self.index(position)
        return try locked { d in
            let done = d.done[bot] ?? []
            var out: [StoredMessage] = []
            var end = max(from, 0)
            var i = from
            while i < d.messages.count, out.count < limit {
                let m = d.messages[i]
                i += 1
                end = i
                guard Self.isInbound(m), !done.contains(m.id) else { continue }
                var withFields = m
                (withFields.channel, withFields.locale) = d.conversations[m.conversationID] ?? (nil, nil)
                out.append(withFields)
            }
            return Page(messages: out, end: Self.position(end))
        }
    }

    public func waitForChanges(after position: StorePosition, timeout: Duration) async throws {
        let from = try Self.index(position)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try locked({ $0.messages.count > from }) { return }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    public func move(bot: String, to position: StorePosition) async throws {
        let to = try Self.index(position)
        try locked { d in d.positions[bot] = max(d.positions[bot] ?? 0, min(to, d.messages.count)) }
    }

    public func states(bot: String, conversations: [String]) async throws -> [String: ConversationState] {
        try locked { d in
            var out: [String: ConversationState] = [:]
            for c in conversations { if let s = d.states[bot + "\u{0}" + c] { out[c] = s } }
            return out
        }
    }

    public func commit(batch: [Commit]) async throws -> [CommitResult] {
        var links = BatchLinks<String>()
        var results: [CommitResult] = []
        for c in batch { results.append(try await links.result(of: c) { try self.commitOne(c) }) }
        return results
    }

    private func commitOne(_ c: Commit) throws -> CommitResult {
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
                                                text: o.text, at: o.at, ruleID: o.ruleID, quickReplies: o.quickReplies))
            }
            var nseq = d.notifications.last?.seq ?? 0
            for n in c.notifications where !d.notificationKeys.contains(n.idempotencyKey) {
                nseq += 1
                d.notificationKeys.insert(n.idempotencyKey)
                d.notifications.append(StoredNotification(seq: nseq, bot: c.bot, notification: n))
            }
            d.states[key] = c.state
            d.done[c.bot, default: []].insert(c.inbound.id)
            return overtaken && !c.outgoing.isEmpty ? .silenced : .committed
        }
    }

    // The backend's side, for tests (not `BackendStore`: the worker needs none of it).

    /// Writes a message as a backend would; the same id again returns the message stored.
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
            return stored
        }
    }

    /// The agent notifications the commits wrote, in order.
    public var notifications: [StoredNotification] { data.withLock { $0.notifications } }

    /// Every message of a conversation, in order.
    public func transcript(conversation: String) async throws -> [StoredMessage] {
        try locked { d in d.messages.filter { $0.conversationID == conversation } }
    }

    public func close() async throws {
        data.withLock { $0.closed = true }
    }
}
