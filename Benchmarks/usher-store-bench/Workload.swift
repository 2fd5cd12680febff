import Foundation
import UsherEngine
import UsherSQLite
import UsherStore

/// The messages every loop of the benchmark works through: customer messages spread round-robin
/// over conversations, written straight into a fresh database file before the clock starts.
struct Workload: Sendable {
    var messages: Int
    var conversations: Int
    static let bot = BotIdentity(id: "bench", name: "Bench", senderID: "bot:bench")
    static let t0 = Date(timeIntervalSince1970: 1_764_468_000)
    static let text = "Hi, I want a refund for order 123-4567890-1234567, it never arrived."
    /// A message as a backend writes one into the `messages` table (docs/store-sqlite.md, "Schema"):
    /// ?1 id, ?2 conversation, ?3 kind, ?4 sender type, ?5 sender id, ?6 sender name, ?7 text, ?8 at.
    static let insertMessage = """
        INSERT INTO messages (id, conversation_id, kind, sender_type, sender_id, sender_name, content, created_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
        """

    /// A new database file with the schema and the workload's messages.
    func prepare(path: String, synchronous: SQLiteStore.Options.Synchronous = .normal, pageSize: Int? = nil) async throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        if let pageSize { RawDB(path: path, tuning: Tuning(pageSize: pageSize)).close() }   // an empty file, in WAL mode
        let store = try await SQLiteStore(path: path)   // creates the schema
        try await store.close()
        let db = RawDB(path: path)
        db.exec("BEGIN")
        let conv = db.prepare("""
            INSERT INTO conversations (id, customer_id, channel, locale, created_at, updated_at)
            VALUES (?1, ?2, 'web', 'en', ?3, ?3)
            """)
        for c in 0..<conversations {
            db.bind(conv, 1, "c-\(c)")
            db.bind(conv, 2, "u-\(c)")
            db.bind(conv, 3, Self.t0.timeIntervalSince1970)
            _ = db.step(conv)
            db.reset(conv)
        }
        let msg = db.prepare(Self.insertMessage)
        for i in 0..<messages {
            db.bind(msg, 1, "m-\(i)")
            db.bind(msg, 2, "c-\(i % conversations)")
            db.bind(msg, 3, "message")
            db.bind(msg, 4, "customer")
            db.bind(msg, 5, "u-\(i % conversations)")
            db.bind(msg, 6, "Pooja")
            db.bind(msg, 7, Self.text)
            db.bind(msg, 8, Self.t0.timeIntervalSince1970 + Double(i) / 1000)
            _ = db.step(msg)
            db.reset(msg)
        }
        db.exec("COMMIT")
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
    }

    /// What a decision does to the state, roughly as the engine would for a canned reply.
    static func next(_ old: ConversationState?, for m: StoredMessage) -> ConversationState {
        var s = old ?? ConversationState(conversationID: m.conversationID, channel: m.channel, locale: m.locale,
                                         customerName: m.senderName, customerID: m.senderID)
        if s.sessionStartedAt == nil { s.startSession(at: m.at) }
        s.lastActivityAt = m.at
        s.customerMessages += 1
        s.botReplies += 1
        s.recordFire(of: "opening", at: m.at)
        s.recentReplies.append(m.at)
        if s.recentReplies.count > 3 { s.recentReplies.removeFirst() }
        s.version += 1
        return s
    }

    /// The commit for `m`: the new state and one reply.
    static func commit(_ m: StoredMessage, old: ConversationState?, new: ConversationState) -> Commit {
        let reply = OutgoingMessage(idempotencyKey: "\(bot.id):\(m.id):0", conversationID: m.conversationID, from: .bot,
                                    senderID: bot.senderID, senderName: bot.name,
                                    text: "Thanks for reaching out—we're here to help.", ruleID: "opening", at: m.at)
        return Commit(bot: bot.id, inbound: m, expectedVersion: old?.version ?? 0, state: new, outgoing: [reply],
                      ruleSetVersion: "v1")
    }

    /// A typical stored state, as JSON, for the bare loop to write.
    static var sampleStateJSON: [UInt8] {
        let m = StoredMessage(seq: 1, id: "m-1", conversationID: "c-1", from: .customer, senderID: "u-1",
                              senderName: "Pooja", text: text, at: t0, channel: "web", locale: "en")
        var s: ConversationState?
        for _ in 0..<5 { s = next(s, for: m) }
        return Array(try! JSONEncoder().encode(s!))
    }
}
