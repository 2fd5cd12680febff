import Foundation
import UsherPostgres
import UsherRuntime

/// `--only cost`: the server's CPU for one message answered alone, and what each of Usher's
/// statements adds to it — where the latency part's time goes once the cores are busy, without
/// the noise of timing.
///
/// - Usher: a worker batch of one message, as the throughput ceiling runs it (`Ceiling`, batch
///   size 1): `claimPending`, then the one-round-trip commit in one pipeline, with the store's
///   own SQL and values. Each message is the first of its conversation (a backlog in
///   conversations of one), so its state is inserted.
/// - The floor: its reply (`Floor.reply`), its own transaction as the floor sends it.
/// - Each statement's share: the batch's cost with that statement left out, subtracted from the
///   whole.
///
/// Every variant runs through pgbench with one client on a fresh copy of the backlog; CPU is that
/// of the client's backend (`BenchServer.serverCPUSeconds(endedOnly:)`, counted once it has
/// ended; the WAL writer, checkpointer and autovacuum are left out), per message. The bench's
/// fetch of each batch's values is measured alone and subtracted. pgbench's sessions run with
/// `synchronous_commit = off`: the WAL flush at commit is the same for every commit — Usher's and
/// the floor's reply alike — and on this VM the time the backend spends in `fdatasync` varies
/// more than some statements cost; the store's reading connection commits without waiting for
/// it as well.
enum StatementCost {
    static func run(_ server: BenchServer, sql: PGSQL, bot: BotRuntime, messages: Int, rounds: Int) async throws {
        let started = ContinuousClock.now
        let template = "usher_cost"
        let backlog = try Backlog.create(server, count: messages, perConversation: 1, template: template, sql: sql)
        defer { server.drop(template) }
        let usher = try Ceiling(backlog: backlog, bot: bot, batchSize: 1).script(worker: "pgbench", clients: 1, slot: [:])
        let floor = floorScript(backlog)
        for (name, script) in [("usher", usher), ("floor", floor)] {
            try server.copy(template, to: "\(template)_\(name)")
            try Ceiling.load(script, into: "\(template)_\(name)", server)
        }
        defer { for name in ["usher", "floor"] { server.drop("\(template)_\(name)") } }
        print("statement cost: \(fmt(Double(messages))) messages, each the first of its conversation and answered alone "
              + "(\(fmt((ContinuousClock.now - started) / .seconds(1), 1)) s to build)")

        // What runs: the whole of each side, its fetch alone, and Usher's batch without each statement.
        let names = Profile.names(sql)
        var variants: [(name: String, side: String, script: String)] = [
            ("usher", "usher", usher.text), ("usher fetch", "usher", usher.fetchOnly),
            ("floor", "floor", floor.text), ("floor fetch", "floor", floor.fetchOnly),
        ]
        var statements: [String] = []
        for (i, part) in usher.parts.enumerated() where !part.sql.hasPrefix("\\") {
            let name = names[Profile.normalize(part.sql)] ?? "statement \(i)"
            statements.append(name)
            let rest = usher.parts.enumerated().filter { $0.offset != i }.map(\.element.text).joined()
            variants.append(("without " + name, "usher", usher.header + rest))
        }
        var samples: [String: [Double]] = [:]
        for _ in 1...rounds {
            for v in variants {
                let db = "usher_cost_run"
                try server.copy("\(template)_\(v.side)", to: db)
                try server.checkpoint()
                let before = server.serverCPUSeconds(endedOnly: true)
                _ = try Ceiling.pgbench(server, script: v.script, constants: v.side == "usher" ? usher.constants : floor.constants,
                                        database: db, clients: 1, perClient: messages, settings: ["synchronous_commit": "off"])
                try await Task.sleep(for: .milliseconds(500))   // the backend ends and the postmaster counts its CPU
                samples[v.name, default: []].append((server.serverCPUSeconds(endedOnly: true) - before) * 1e6 / Double(messages))
                server.drop(db)
            }
        }
        // Per round: each side's whole (its fetch subtracted), each statement's share (the batch
        // without it subtracted from the whole); the median and the range over the rounds.
        func perRound(_ a: String, minus b: String) -> [Double] { zip(samples[a] ?? [], samples[b] ?? []).map { $0 - $1 } }
        func median(_ values: [Double]) -> Double {
            let v = values.sorted()
            return v.isEmpty ? .nan : v[v.count / 2]
        }
        func cell(_ values: [Double]) -> String {
            let range = values.count > 1 ? "   (rounds \(fmt(values.min()!, 0))–\(fmt(values.max()!, 0)))" : ""
            return fmt(median(values), 0).leftPad(7) + range
        }
        func label(_ s: String) -> String { s.padding(toLength: 40, withPad: " ", startingAt: 0) }
        print("  server CPU per message, µs (median of \(rounds) round\(rounds == 1 ? "" : "s"); the bench's fetch of the values "
              + "subtracted: \(fmt(median(samples["usher fetch"] ?? []), 0)) and \(fmt(median(samples["floor fetch"] ?? []), 0)) µs)")
        print(label("    usher: claim and commit") + cell(perRound("usher", minus: "usher fetch")))
        for name in statements { print(label("      \(name)") + cell(perRound("usher", minus: "without " + name))) }
        print(label("    the floor: reply") + cell(perRound("floor", minus: "floor fetch")))
    }

    /// The floor's reply to message k (`Floor`: the seq from its NOTIFY, no read), with its value
    /// fetched as the ceiling's are.
    static func floorScript(_ backlog: Backlog) -> Ceiling.Script {
        let header = """
            -- usher-pg-bench --only cost: the floor's reply to one message.
            \(Ceiling.counters)SELECT f0_1 FROM bench.batches WHERE k = :k \\gset

            """
        let rows: [[String?]] = (0..<backlog.count).map { i in
            let m = backlog.message(i)
            return ["{\(m.seq)}"]
        }
        return Ceiling.Script(
            header: header, parts: [Ceiling.Script.part(Floor.reply) { "f0_\($0)" }],
            constants: [:], columns: ["f0_1"], rows: rows, batches: backlog.count, messagesPerBatch: 1)
    }
}
