import Foundation
import UsherBenchSupport
import UsherEngine
import UsherPostgres
import UsherRuntime
import UsherStore
import UsherTestSupport

/// The ceiling: pgbench running, per transaction, the statements one worker batch runs — the
/// claim, the states read and the group commit — with the store's own SQL text (`store.sql`,
/// generated from the layout) and the parameter values the store sends for that batch.
///
/// How the script stays the same as the store:
/// - Every statement is the `PGSQL` property the store executes, taken from a live
///   `PostgresStore` at run time; each `$n` becomes a pgbench variable `:s<statement>_<n>`
///   (pgbench turns them back into `$n` of a prepared statement, `-M prepared`, as libpq's
///   `PQprepare` does in the store). Nothing else in the text changes.
/// - The statements come in the order `Worker.process` and `PGCommit.write` run them for a batch
///   of fresh conversations: claimPending (the read of the batch, its states and its claim), then
///   commitStates, lockConversations, updateConversations, expectAgents, openHandoffs, insertOutgoing,
///   insertNotifications, insertProcessed — in the same round trip and one implicit
///   transaction: one pipeline (`\startpipeline` … `\endpipeline`, which commits at its sync
///   point), as `PGConnection.pipeline` sends a batch whose commits find what they expect
///   (`PGCommit`, one round trip).
/// - The values are built here as `PGCommit` builds them (same array literals, the same
///   decisions from the engine, the same JSON for states), one row per batch in
///   `bench.batches`, fetched by the script with `\gset` (the only statement the store does not
///   run; its cost is measured alone and reported).
/// - pg_stat_statements then compares both runs statement by statement (calls and rows per
///   batch): any drift between this mirror and `PGCommit` shows up there.
struct Ceiling {
    /// One statement of a batch with its parameter values (nil: NULL).
    struct Statement {
        var sql: String
        var params: [String?]
    }

    let backlog: Backlog
    let bot: BotRuntime
    let batchSize: Int

    /// The statements of the worker batch made of backlog messages `indices` (of `share`), the
    /// batch before it (same share) being `previous`.
    func statements(_ indices: ArraySlice<Int>, previous: ArraySlice<Int>, share: Share, worker: String, until: Date,
                    now: Date) -> [Statement] {
        let sql = backlog.sql
        let messages = indices.map(backlog.message)
        var order: [String] = []
        var byConversation: [String: [StoredMessage]] = [:]
        for m in messages {
            if byConversation[m.conversationID] == nil { order.append(m.conversationID) }
            byConversation[m.conversationID, default: []].append(m)
        }
        var out: [Statement] = []
        // Worker.intake: the batch read and claimed (PostgresStore.claimPending), from a cursor
        // just below it, in the client's share, skipping the conversations of the batch before
        // (the worker's batch in flight), each with the seq that batch read it through.
        var inFlight: [String: Int64] = [:]
        for m in previous.map(backlog.message) { inFlight[m.conversationID] = max(inFlight[m.conversationID] ?? 0, m.seq) }
        let inFlightOrder = inFlight.keys.sorted()
        out.append(Statement(sql: sql.claimPending, params: [
            String(messages[0].seq - 1), bot.id, String(batchSize), worker, String(until.timeIntervalSince1970),
            String(until.timeIntervalSince(now) / 2), Arr.text(inFlightOrder), String(share.count), String(share.index),
            "{" + inFlightOrder.map { String(inFlight[$0]!) }.joined(separator: ",") + "}",
        ]))
        // Worker.prepare: the states came with the batch; every message decided in memory.
        var batch: [Commit] = []
        for c in order { batch += TestBot.decide(byConversation[c]!, bot, at: now) }
        out += commitStatements(batch, sql)
        return out
    }

    /// `PGCommit`'s commit in one round trip for a batch whose conversations have no state yet,
    /// none of whose messages is done, with no agent message: every commit is committed.
    private func commitStatements(_ batch: [Commit], _ sql: PGSQL) -> [Statement] {
        struct Pair: Hashable { var bot: String; var conversation: String }
        func pair(_ c: Commit) -> Pair { Pair(bot: c.bot, conversation: c.inbound.conversationID) }
        var seen = Set<Pair>()
        let pairs = batch.map(pair).filter { seen.insert($0).inserted }
        // One pipeline, one implicit transaction: the writes, checking as they go.
        var out: [Statement] = [Statement(sql: "\\startpipeline", params: [])]
        // 1. States: new ones (none expected), each pair's last, with the watermark, and the
        // order check: nothing undone below each conversation's newest message but the batch's.
        // The states in lock order, as PGCommit sends them.
        var final: [Pair: (Commit, Int64)] = [:]
        for c in batch { final[pair(c)] = (c, max(final[pair(c)]?.1 ?? 0, c.inbound.seq)) }
        let states = pairs.sorted { PGSQL.lockOrder(($0.bot, $0.conversation), ($1.bot, $1.conversation)) }
        out.append(Statement(sql: sql.commitStates, params: [
            Arr.text(states.map(\.bot)), Arr.text(states.map(\.conversation)),
            Arr.int(states.map { Int64(final[$0]!.0.state.version) }),
            Arr.text(states.map { final[$0]!.0.state.owner.rawValue }),
            Arr.int(states.map { final[$0]!.1 }),
            Arr.text(states.map { json(final[$0]!.0.state) }),
            Arr.text(states.map { final[$0]!.0.ruleSetVersion }),
            Arr.int(states.map { _ in 0 }), "{" + states.map { _ in "f" }.joined(separator: ",") + "}",
            Arr.text(batch.map(\.bot)), Arr.int(batch.map(\.inbound.seq)),
        ]))
        // 2. The conversations' rows locked (sorted), when there are replies.
        var low: [String: Int64] = [:]
        if batch.contains(where: { !$0.outgoing.isEmpty }) {
            for c in batch { low[c.inbound.conversationID] = min(low[c.inbound.conversationID] ?? .max, c.inbound.seq) }
            if let lock = sql.lockConversations { out.append(Statement(sql: lock, params: [Arr.text(low.keys.sorted())])) }
        }
        // 3. Conversations: the last state of each.
        if let q = sql.updateConversations {
            var last: [String: ConversationState] = [:]
            var order: [String] = []
            for c in batch {
                if last[c.inbound.conversationID] == nil { order.append(c.inbound.conversationID) }
                last[c.inbound.conversationID] = c.state
            }
            var params: [String?] = [Arr.text(order)]
            for w in sql.conversationWrites {
                params.append(Arr.optional(order.map { c -> String? in
                    let s = last[c]!
                    switch w.param {
                    case "owner": return s.owner.rawValue   // the native layout's owner values
                    case "assigned": return s.owner == .bot ? "false" : "true"
                    case "count": return String(s.customerMessages)
                    case "tags": return json(s.tags)
                    case "metadata": return json(s.metadata)
                    default: return s.customerID
                    }
                }))
            }
            let now = Date().timeIntervalSince1970
            params.append(Arr.double(order.map { _ in now }))
            out.append(Statement(sql: q, params: params))
        }
        // 4. No agent message after each conversation's oldest message of the batch, when there
        // are replies.
        if !low.isEmpty {
            let agentConversations = low.keys.sorted()
            out.append(Statement(sql: sql.expectAgents, params: [
                Arr.text(agentConversations), Arr.int(agentConversations.map { low[$0]! }),
            ]))
        }
        // 5. Classification: every commit commits; handoffs open as the owner becomes waiting
        // (one round: a conversation hands off once here).
        var owner: [Pair: Owner] = [:]
        var opens: [Commit] = []
        for c in batch {
            let p = pair(c)
            let before = owner[p]
            owner[p] = c.state.owner
            if c.state.owner == .waiting, before != .waiting { opens.append(c) }
        }
        if !opens.isEmpty {
            let handoff = opens.map { c in c.notifications.first { $0.isHandoff } }
            out.append(Statement(sql: sql.openHandoffs, params: [
                Arr.text(opens.map(\.bot)), Arr.text(opens.map(\.inbound.conversationID)),
                Arr.text(opens.map { "\($0.bot):\($0.inbound.id):handoff" }), Arr.text(opens.map(\.inbound.id)),
                Arr.optional(handoff.map { $0?.queue }), Arr.optional(handoff.map { $0?.reason }),
                Arr.optional(opens.map(\.state.customerName)),
                Arr.optional(opens.map { c in c.outgoing.first { $0.from == .system }?.ruleID }),
            ]))
        }
        // 6. Replies and notices. 7. Notifications.
        let outgoing = batch.flatMap(\.outgoing)
        if !outgoing.isEmpty {
            out.append(Statement(sql: sql.insertOutgoing, params: [
                Arr.text(outgoing.map(\.idempotencyKey)), Arr.text(outgoing.map(\.conversationID)),
                Arr.text(outgoing.map { $0.from == .system ? "system" : "bot" }),
                Arr.text(outgoing.map(\.senderID)), Arr.text(outgoing.map(\.senderName)),
                Arr.text(outgoing.map(\.text)), Arr.double(outgoing.map { $0.at.timeIntervalSince1970 }),
                Arr.text(outgoing.map(\.ruleID)), Arr.optional(outgoing.map { QuickReply.json($0.quickReplies) }),
            ]))
        }
        let notes = batch.flatMap { c in c.notifications.map { (c.bot, $0) } }
        if !notes.isEmpty {
            out.append(Statement(sql: sql.insertNotifications, params: [
                Arr.text(notes.map(\.0)), Arr.text(notes.map(\.1.idempotencyKey)),
                Arr.text(notes.map(\.1.conversationID)), Arr.text(notes.map(\.1.queue)),
                Arr.text(notes.map(\.1.reason)), Arr.text(notes.map(\.1.text)),
                Arr.optional(notes.map(\.1.customerName)), Arr.text(notes.map(\.1.lastMessage)),
                "{" + notes.map { $0.1.isHandoff ? "t" : "f" }.joined(separator: ",") + "}",
                Arr.double(notes.map { $0.1.at.timeIntervalSince1970 }),
            ]))
        }
        // 8. Done marks.
        out.append(Statement(sql: sql.insertProcessed, params: [
            Arr.text(batch.map(\.bot)), Arr.text(batch.map(\.inbound.id)), Arr.int(batch.map(\.inbound.seq)),
            Arr.text(batch.map(\.inbound.conversationID)), Arr.optional(batch.map { _ in nil }),
        ]))
        out.append(Statement(sql: "\\endpipeline", params: []))
        return out
    }

    private func json(_ value: some Encodable) -> String {
        (try? String(decoding: JSONEncoder().encode(value), as: UTF8.self)) ?? "null"
    }

    // MARK: the pgbench script and its data

    /// A script and the data it reads, for the full batches of the backlog.
    struct Script {
        /// The counters and the fetch of the batch's values.
        var header: String
        /// Each statement (or pipeline end) as the script runs it, with the SQL it was made from.
        var parts: [(sql: String, text: String)]
        /// pgbench `-D` definitions: values every batch shares.
        var constants: [String: String]
        /// Per-batch variable names (columns of `bench.batches`) and one row per batch.
        var columns: [String]
        var rows: [[String?]]
        var batches: Int
        var messagesPerBatch: Int

        var text: String { header + parts.map(\.text).joined() }

        /// The header alone, cycling over the batches: to time the bench's own statement.
        var fetchOnly: String {
            header.replacingOccurrences(of: Ceiling.counter, with: "\\set k (:n * :clients + :client_id) % \(batches)")
        }

        /// `sql` as a line of the script, its `$n` the pgbench variable `variable(n)`;
        /// pgbench meta-commands (the pipelines' ends) stand alone.
        static func part(_ sql: String, _ variable: (Int) -> String) -> (sql: String, text: String) {
            (sql: sql, text: sql.hasPrefix("\\") ? sql + "\n" : PGSQL.replacingParameters(in: sql) { ":" + variable($0) } + ";\n")
        }
    }

    /// The script for `clients` clients: client c works through the backlog messages of share c
    /// of `clients` (as worker c of as many would), `slot` giving each conversation's
    /// `hashtext(id)::int8 & 2147483647` (`PGSQL.shareSlot`) as the server computes it. Batch k
    /// is client k % clients's (k / clients)th.
    func script(worker: String, clients: Int, slot: [String: Int64]) throws -> Script {
        var byShare: [[Int]] = Array(repeating: [], count: clients)
        for i in 0..<backlog.count {
            let c = clients == 1 ? 0 : Int(slot[backlog.message(i).conversationID, default: 0] % Int64(clients))
            byShare[c].append(i)
        }
        let perClient = byShare.map { $0.count / batchSize }.min() ?? 0
        guard perClient > 0 else { throw BenchError("the backlog is smaller than one batch per client") }
        let batches = perClient * clients
        let until = Date().addingTimeInterval(3600)
        let now = Date()
        let all = (0..<batches).map { k in
            let (n, c) = (k / clients, k % clients)
            return statements(byShare[c][n * batchSize..<(n + 1) * batchSize],
                              previous: n == 0 ? [] : byShare[c][(n - 1) * batchSize..<n * batchSize],
                              share: Share(index: c, count: clients), worker: worker, until: until, now: now)
        }
        let shape = all[0].map(\.sql)
        guard all.allSatisfy({ $0.map(\.sql) == shape }) else { throw BenchError("batches of different shapes") }
        // A variable per (statement, parameter); constant across batches → -D, else a column.
        var constants: [String: String] = [:]
        var columns: [String] = []
        var columnIndex: [(s: Int, p: Int)] = []
        var nullConstants: Set<String> = []
        for (s, statement) in all[0].enumerated() {
            for p in statement.params.indices {
                let name = "s\(s)_\(p + 1)"
                let values = all.map { $0[s].params[p] }
                if values.allSatisfy({ $0 == values[0] }) {
                    if let v = values[0] { constants[name] = v } else { nullConstants.insert(name) }
                } else {
                    columns.append(name)
                    columnIndex.append((s, p))
                }
            }
        }
        // NULL constants cannot travel in -D; they are fetched (pgbench passes them as '').
        for name in nullConstants.sorted() { columns.append(name) }
        let rows: [[String?]] = all.map { batch in
            columnIndex.map { batch[$0.s].params[$0.p] } + nullConstants.sorted().map { _ in nil }
        }
        let header = """
        -- usher-pg-bench: one worker batch of \(batchSize) message\(batchSize == 1 ? "" : "s") (claim, states, group commit),
        -- the statements of PostgresStore with pgbench variables in place of $n.
        \(Self.counters)SELECT \(columns.joined(separator: ", ")) FROM bench.batches WHERE k = :k \\gset

        """
        let parts = all[0].enumerated().map { s, statement in Script.part(statement.sql) { "s\(s)_\($0)" } }
        return Script(header: header, parts: parts, constants: constants, columns: columns, rows: rows, batches: batches,
                      messagesPerBatch: batchSize)
    }

    /// Batch `k` of client c is its `n`th (from 0): k = n × clients + c.
    static let counter = "\\set k :n * :clients + :client_id"
    /// A script's first lines.
    static let counters = counter + "\n\\set n :n + 1\n"

    /// Loads the batches' values into `bench.batches` of `database`.
    static func load(_ script: Script, into database: String, _ server: BenchServer) throws {
        let columns = script.columns.map { "\($0) text" }.joined(separator: ", ")
        try server.psql("""
            CREATE SCHEMA bench;
            CREATE TABLE bench.batches (k integer PRIMARY KEY, \(columns));
            """, database: database)
        // COPY text format from a file the server reads.
        let file = server.server.directory + "/batches-\(database).tsv"
        var data = ""
        for (k, row) in script.rows.enumerated() {
            data += String(k)
            for v in row { data += "\t" + (v.map(copyEscape) ?? "\\N") }
            data += "\n"
        }
        try data.write(toFile: file, atomically: true, encoding: .utf8)
        _ = chmod(file, 0o644)
        defer { unlink(file) }
        // Stored uncompressed, so the fetch costs a read and not a decompression.
        let plain = script.columns.map { "ALTER COLUMN \($0) SET STORAGE EXTERNAL" }.joined(separator: ", ")
        try server.psql("""
            ALTER TABLE bench.batches \(plain);
            COPY bench.batches FROM '\(file)';
            VACUUM ANALYZE bench.batches;
            """, database: database)
    }

    static func copyEscape(_ s: String) -> String {
        var out = ""
        for ch in s.unicodeScalars {
            switch ch {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }

    /// pgbench with `clients` clients, each running `perClient` batches of the script.
    static func pgbench(_ server: BenchServer, script: String, constants: [String: String], database: String,
                        clients: Int, perClient: Int, settings: [String: String] = [:]) throws -> (tps: Double, cpu: Double) {
        let before = cpuSeconds(children: true)
        let out = try runPGBench(server, script: script, database: database, constants: constants,
                                 options: ["-c", String(clients), "-j", String(clients), "-t", String(perClient)], settings: settings)
        let cpu = cpuSeconds(children: true) - before
        let processed = out.split(separator: "\n").first { $0.hasPrefix("number of transactions actually processed:") }
        guard let line = out.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
              let tps = Double(line.dropFirst(6).prefix { $0 != " " }) else {
            throw BenchError("pgbench printed no tps: \(out.suffix(2000))")
        }
        guard processed?.hasSuffix("\(clients * perClient)/\(clients * perClient)") ?? false else {
            throw BenchError("pgbench did not run every batch: \(processed ?? "?")")
        }
        return (tps, cpu)
    }

    /// Runs pgbench (`-M prepared`, `options` for the clients and the length) with `script`, the
    /// variables `n` = 0 and `clients`, and `constants`; returns its output. The store's sessions
    /// plan each prepared statement once (`plan_cache_mode`) and without JIT: so do pgbench's.
    static func runPGBench(_ server: BenchServer, script: String, database: String, constants: [String: String] = [:],
                           options: [String], settings: [String: String] = [:]) throws -> String {
        let file = NSTemporaryDirectory() + "usher-pg-bench-\(getpid())-\(UUID().uuidString).pgbench"
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        defer { unlink(file) }
        let clients = options.firstIndex(of: "-c").map { options[$0 + 1] } ?? "1"
        var args = ["/usr/bin/env", "PGOPTIONS=-c plan_cache_mode=force_generic_plan -c jit=off"
                        + settings.sorted { $0.key < $1.key }.map { " -c \($0.key)=\($0.value)" }.joined(), server.program("pgbench"), "-n", "-M", "prepared",
                    "-h", server.server.directory, "-U", server.server.user] + options + ["-D", "n=0", "-D", "clients=\(clients)"]
        for (k, v) in constants.sorted(by: { $0.key < $1.key }) { args += ["-D", "\(k)=\(v)"] }
        args += ["-f", file, database]
        let (status, out) = try Shell.run(args)
        guard status == 0, !out.contains("aborted") else { throw BenchError("pgbench failed (\(status)): \(out.suffix(2000))") }
        return out
    }
}

/// Array literals exactly as `PGText.array` writes them.
enum Arr {
    static func text(_ values: [String]) -> String {
        var out = "{"
        var first = true
        for v in values {
            if !first { out += "," }
            first = false
            out += "\""
            for ch in v.unicodeScalars {
                if ch == "\"" || ch == "\\" { out += "\\" }
                out.unicodeScalars.append(ch)
            }
            out += "\""
        }
        return out + "}"
    }

    static func optional(_ values: [String?]) -> String {
        "{" + values.map { v in v.map { String(text([$0]).dropFirst().dropLast()) } ?? "NULL" }.joined(separator: ",") + "}"
    }

    static func int(_ values: [Int64]) -> String { "{" + values.map(String.init).joined(separator: ",") + "}" }

    static func double(_ values: [Double]) -> String { "{" + values.map { String($0) }.joined(separator: ",") + "}" }
}
