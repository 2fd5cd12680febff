import Foundation
import UsherPostgres

/// Per-statement server time of one run, from pg_stat_statements (server-side execution only:
/// neither the round trip nor the client is in it, nor the WAL flush at COMMIT), with the shared
/// buffers each touched and the WAL it wrote: the work itself, which the time is not when more
/// backends than cores take turns.
struct Profile {
    struct Row {
        var name: String
        var calls: Int
        var rows: Int
        var milliseconds: Double
        /// Shared buffers hit or read.
        var buffers: Int = 0
        var walBytes: Double = 0
    }

    var rows: [Row]

    static func reset(_ server: BenchServer) throws {
        try server.psql("SELECT pg_stat_statements_reset()")
    }

    static func read(_ server: BenchServer, database: String, sql: PGSQL) throws -> Profile {
        let names = Self.names(sql)
        let out = try server.psql("""
            SELECT calls, rows, total_exec_time, shared_blks_hit + shared_blks_read, wal_bytes, regexp_replace(regexp_replace(query, '--[^\\n]*', '', 'g'), '\\s+', ' ', 'g')
            FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '\(database)')
            """)
        var byName: [String: Row] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", maxSplits: 5, omittingEmptySubsequences: false)
            guard f.count == 6 else { continue }
            let key = normalize(String(f[5]))
            let name = names[key] ?? (key.hasPrefix("SELECT s") && key.contains("bench.batches") ? "(bench: fetch the batch)" : "other: " + key.prefix(60))
            var row = byName[name] ?? Row(name: name, calls: 0, rows: 0, milliseconds: 0)
            row.calls += Int(f[0]) ?? 0
            row.rows += Int(f[1]) ?? 0
            row.milliseconds += Double(f[2]) ?? 0
            row.buffers += Int(f[3]) ?? 0
            row.walBytes += Double(f[4]) ?? 0
            byName[name] = row
        }
        let order = Self.order
        return Profile(rows: byName.values.sorted {
            (order.firstIndex(of: $0.name) ?? 99, $0.name) < (order.firstIndex(of: $1.name) ?? 99, $1.name)
        })
    }

    static let order = ["cursor", "latestSeq", "claimPending", "pending", "claim", "states", "BEGIN", "processed", "lockStates",
                        "undoneBetween", "lockConversations", "agentAfter", "commitStates", "updateConversations", "expectAgents",
                        "openHandoffs", "closeHandoffs", "insertOutgoing", "insertNotifications", "insertStates", "updateStates", "insertProcessed",
                        "COMMIT", "cursorTarget", "setCursor", "release", "notifications", "(bench: fetch the batch)"]

    static func names(_ sql: PGSQL) -> [String: String] {
        var n: [String: String] = [
            sql.cursor: "cursor", sql.latestSeq: "latestSeq", sql.pending: "pending", sql.claim: "claim",
            sql.claimPending: "claimPending",
            sql.states: "states", "BEGIN": "BEGIN", "COMMIT": "COMMIT", sql.processed: "processed",
            sql.lockStates: "lockStates", sql.undoneBetween: "undoneBetween", sql.agentAfter: "agentAfter", sql.commitStates: "commitStates",
            sql.expectAgents: "expectAgents",
            sql.openHandoffs: "openHandoffs", sql.closeHandoffs: "closeHandoffs", sql.insertOutgoing: "insertOutgoing",
            sql.insertNotifications: "insertNotifications", sql.insertStates: "insertStates",
            sql.updateStates: "updateStates", sql.insertProcessed: "insertProcessed",
            sql.cursorTarget: "cursorTarget", sql.setCursor: "setCursor", sql.release: "release", sql.notifications: "notifications",
        ]
        if let u = sql.updateConversations { n[u] = "updateConversations" }
        if let c = sql.lockConversations { n[c] = "lockConversations" }
        return Dictionary(n.map { (normalize($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    /// Comments dropped, whitespace collapsed; parameters, string and number literals all `$` (pg_stat_statements
    /// shows constants as parameters, and pgbench numbers parameters its own way); no final `;`.
    static func normalize(_ s: String) -> String {
        var out = ""
        // extract(epoch FROM …): the field is a constant too.
        let chars = Array(s.replacingOccurrences(of: "extract(epoch FROM", with: "extract($ FROM"))
        var i = 0
        var lastSpace = false
        func identChar(_ c: Character?) -> Bool { c.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
        while i < chars.count {
            let ch = chars[i]
            if ch.isWhitespace {
                if !lastSpace { out.append(" ") }
                lastSpace = true
                i += 1
                continue
            }
            if ch == "-", i + 1 < chars.count, chars[i + 1] == "-" {
                // A comment (kept in pg_stat_statements' text; an apostrophe in it is no quote).
                while i < chars.count, chars[i] != "\n" { i += 1 }
                continue
            }
            lastSpace = false
            if ch == "'" {
                // A string literal ('' inside doubles a quote).
                i += 1
                while i < chars.count {
                    if chars[i] == "'" {
                        if i + 1 < chars.count, chars[i + 1] == "'" { i += 2; continue }
                        break
                    }
                    i += 1
                }
                i += 1
                out.append("$")
                continue
            }
            if ch == "$" || (ch.isASCII && ch.isNumber && !identChar(out.last)) {
                i += 1
                while i < chars.count, chars[i].isASCII, chars[i].isNumber || chars[i] == "." { i += 1 }
                out.append("$")
                continue
            }
            out.append(ch)
            i += 1
        }
        var t = out.trimmingCharacters(in: .whitespaces)
        while t.hasSuffix(";") { t = String(t.dropLast()).trimmingCharacters(in: .whitespaces) }
        return t
    }

    func row(_ name: String) -> Row? { rows.first { $0.name == name } }

    var totalMilliseconds: Double { rows.reduce(0) { $0 + $1.milliseconds } }
    var totalBuffers: Int { rows.reduce(0) { $0 + $1.buffers } }
    var totalWALBytes: Double { rows.reduce(0) { $0 + $1.walBytes } }
}
