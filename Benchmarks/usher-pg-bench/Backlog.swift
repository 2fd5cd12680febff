import Foundation
import UsherBenchSupport
import UsherEngine
import UsherPostgres
import UsherRuntime
import UsherStore
import UsherTestSupport

/// A backlog of `count` customer messages in conversations of 4 (`m<i>` in `c<i/4>`; `--only
/// cost`: of 1), written once into a template database that every run copies. The rows are what
/// `PostgresStore.append` writes (conversation upserted, message with the customer sender and its
/// time), inserted with one statement each instead of 40,000 transactions.
///
/// Before the backlog, the database gets a history: earlier customer messages (`hm<i>` in
/// `hc<i/4>`) already answered and handed off — their replies, states, done marks,
/// notifications, handoffs and (expired) leases, as the worker writes them — and the cursor
/// after them; then ANALYZE, as autovacuum would have run on a database in service. Without it
/// every Usher table is analyzed empty (as right after the migration) and the planner picks
/// nested loops whose cost grows with the square of the rows written during the run (`--cold`).
struct Backlog {
    static let history = "usher_history"
    static let template = "usher_backlog"
    let count: Int
    /// Messages per conversation.
    let perConversation: Int
    let at: Date
    /// The seq of backlog message 0.
    let firstSeq: Int64
    let sql: PGSQL

    /// The database `history`: Usher's schema, `count` answered messages, analyzed.
    static func createHistory(_ server: BenchServer, count: Int, bot: BotRuntime) async throws -> PGSQL {
        server.drop(history)
        try server.psql("CREATE DATABASE \(history) TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
        // The schema, exactly as a worker creates it.
        let store = try await PostgresStore(url: server.url(history))
        let sql = store.sql
        try await store.close()
        try await Task.sleep(for: .milliseconds(300))   // the LISTEN connection closes
        if count > 0 { try writeHistory(server, count, bot: bot, at: Date()) }
        try server.psql("VACUUM ANALYZE", database: history)
        return sql
    }

    /// The database `template`: a copy of `history` with the backlog after it.
    static func create(_ server: BenchServer, count: Int, perConversation: Int = 4, template: String = template,
                       sql: PGSQL) throws -> Backlog {
        try server.copy(history, to: template)
        let k = perConversation
        let at = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded() / 1000)
        let t = String(at.timeIntervalSince1970)
        let before = Int64(try server.value("SELECT coalesce(max(seq), 0) FROM messages", database: template)) ?? 0
        try server.psql("""
            INSERT INTO conversations (id, created_at, updated_at)
            SELECT 'c' || g, to_timestamp(\(t)), to_timestamp(\(t)) FROM generate_series(0, \((count - 1) / k)) AS g;
            INSERT INTO messages (id, conversation_id, kind, sender_type, content, created_at)
            SELECT 'm' || g, 'c' || (g / \(k)), 'message', 'customer', 'hello ' || (g % \(k)), to_timestamp(\(t))
            FROM generate_series(0, \(count - 1)) AS g ORDER BY g;
            VACUUM ANALYZE conversations, messages;
            """, database: template)
        let last = Int64(try server.value("SELECT max(seq) FROM messages", database: template)) ?? 0
        guard last == before + Int64(count) else { throw BenchError("backlog: expected seq up to \(before + Int64(count)), got \(last)") }
        return Backlog(count: count, perConversation: k, at: at, firstSeq: before + 1, sql: sql)
    }

    /// Message `i` as the worker reads it.
    func message(_ i: Int) -> StoredMessage {
        StoredMessage(seq: firstSeq + Int64(i), id: "m\(i)", conversationID: "c\(i / perConversation)", from: .customer,
                      text: "hello \(i % perConversation)", at: at)
    }

    /// The rows a worker leaves after answering `count` messages in conversations of 4: one
    /// conversation decided by the engine is the pattern, repeated with its ids replaced.
    private static func writeHistory(_ server: BenchServer, _ count: Int, bot: BotRuntime, at: Date) throws {
        let t = String(at.timeIntervalSince1970 - 86_400)
        let conversations = count / 4
        let sample = (0..<4).map { k in
            StoredMessage(seq: Int64(k + 1), id: "@M\(k)@", conversationID: "@C@", from: .customer, text: "hello \(k)", at: at)
        }
        let commits = TestBot.decide(sample, bot, at: at)
        func lit(_ s: String?) -> String {
            guard let s else { return "NULL" }
            return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        }
        // Replies and notices: (k, index in the commit, sender, sender id, name, text, rule).
        var outgoing: [String] = []
        for (k, c) in commits.enumerated() {
            for (n, o) in c.outgoing.enumerated() {
                let index = o.idempotencyKey.split(separator: ":").last.map(String.init) ?? String(n)
                outgoing.append("(\(k), \(lit(index)), \(lit(o.from == .system ? "system" : "bot")), \(lit(o.senderID)), "
                                + "\(lit(o.senderName)), \(lit(o.text)), \(lit(o.ruleID)))")
            }
        }
        let last = commits.last!
        let state = (try? String(decoding: JSONEncoder().encode(last.state), as: UTF8.self)) ?? "{}"
        let note = last.notifications.first { $0.isHandoff }
        let noteKey = note?.idempotencyKey.split(separator: ":").last.map(String.init) ?? "0"
        let j = "g.j"
        try server.psql("""
            INSERT INTO conversations (id, owner, assigned_to_agent, customer_message_count, created_at, updated_at)
            SELECT 'hc' || j, \(lit(last.state.owner.rawValue)), true, 4, to_timestamp(\(t)), to_timestamp(\(t))
            FROM generate_series(0, \(conversations - 1)) AS g(j);
            INSERT INTO messages (id, conversation_id, kind, sender_type, content, created_at)
            SELECT 'hm' || i, 'hc' || (i / 4), 'message', 'customer', 'hello ' || (i % 4), to_timestamp(\(t))
            FROM generate_series(0, \(conversations * 4 - 1)) AS i ORDER BY i;
            INSERT INTO messages (id, conversation_id, kind, sender_type, sender_id, sender_name, content, created_at, rule_id, idempotency_key)
            SELECT 'bench:hm' || (4 * \(j) + o.k) || ':' || o.n, 'hc' || \(j), 'message', o.s, o.sid, o.sn, o.t, to_timestamp(\(t)),
                   o.r, 'bench:hm' || (4 * \(j) + o.k) || ':' || o.n
            FROM generate_series(0, \(conversations - 1)) AS g(j),
                 (VALUES \(outgoing.joined(separator: ", "))) AS o(k, n, s, sid, sn, t, r)
            ORDER BY \(j), o.k, o.n;
            INSERT INTO usher.processed (bot, message_id, seq, conversation_id, committed_at)
            SELECT 'bench', m.id, m.seq, m.conversation_id, to_timestamp(\(t)) FROM messages AS m WHERE m.sender_type = 'customer';
            INSERT INTO usher.bot_state (bot, conversation_id, version, owner, last_seq, state, rule_set_version, updated_at)
            SELECT 'bench', c.id, \(last.state.version), \(lit(last.state.owner.rawValue)),
                   (SELECT max(seq) FROM messages AS m WHERE m.conversation_id = c.id AND m.sender_type = 'customer'),
                   replace(\(lit(state)), '@C@', c.id), \(lit(last.ruleSetVersion)), to_timestamp(\(t))
            FROM conversations AS c;
            INSERT INTO usher.notifications (bot, idempotency_key, conversation_id, queue, reason, text, customer_name,
                                             last_message, is_handoff, created_at)
            SELECT 'bench', 'bench:hm' || (4 * \(j) + 3) || ':' || \(lit(noteKey)), 'hc' || \(j), \(lit(note?.queue)),
                   \(lit(note?.reason)), \(lit(note?.text)), NULL, 'hello 3', true, to_timestamp(\(t))
            FROM generate_series(0, \(conversations - 1)) AS g(j);
            INSERT INTO usher.handoffs (bot, conversation_id, idempotency_key, message_id, queue, reason, rule_id, waiting_since)
            SELECT 'bench', 'hc' || \(j), 'bench:hm' || (4 * \(j) + 3) || ':handoff', 'hm' || (4 * \(j) + 3), \(lit(note?.queue)),
                   \(lit(note?.reason)), \(lit(last.outgoing.first { $0.from == .system }?.ruleID)), to_timestamp(\(t))
            FROM generate_series(0, \(conversations - 1)) AS g(j);
            INSERT INTO usher.leases (bot, conversation_id, worker, until)
            SELECT 'bench', 'hc' || \(j), 'history-worker', to_timestamp(\(t)) FROM generate_series(0, \(conversations - 1)) AS g(j);
            INSERT INTO usher.cursors (bot, seq) SELECT 'bench', max(seq) FROM messages;
            """, database: history)
    }
}
