// usher-pg-bench — the worker on PostgreSQL against pgbench running the same statements
// (BENCHMARKS.md, "The worker on PostgreSQL"). Needs the PostgreSQL server binaries and pgbench;
// starts its own server (fsync on) in a temporary directory and stops it at exit.
//
// Its options: `usage` below (`--help` prints it).
import Foundation
import UsherBenchSupport
import UsherPostgres
import UsherPostgresTestServer
import UsherTestSupport

let usage = """
        swift build -c release --product usher-pg-bench
        .build/release/usher-pg-bench [--quick] [--messages N] [--workers 1,2,4] [--rounds R]
                                      [--only throughput|latency|cost] [--rate 1000] [--seconds 5]
                                      [--history N | --cold] [--profile] [--script FILE]
                                      [--notify-window S] [--set name=value] [--keep] [--breakdown]
                                      [--feeder pgbench|store] [--no-floor] [--no-take] [--no-ceiling]
                                  [--commit-sessions N]

    Throughput: a backlog of N messages (default 40,000; --quick 8,000) in conversations of 4,
    after a history of as many answered ones (--cold: none), done by 1, 2 and 4 in-process
    workers (each its own PostgresStore and Worker), against pgbench with 1, 2 and 4 clients
    running the claim, states and group commit of the same batches with the store's own SQL
    (Ceiling.swift says how). Latency: one worker, LISTEN/NOTIFY, 1,000 msg/s offered by four
    other connections. Every part runs R rounds (default 3, --quick 1); the summary gives the best,
    the median and the range. --profile prints the per-statement table of every round (else round 1:
    server time, shared buffers touched and WAL written per batch);
    --breakdown splits the latency of each conversation's first message at its read (every
    message is read then, as with --no-take);
    --feeder store writes the latency part's messages from this process instead of pgbench;
    --no-take has the latency part's worker read every message, none taken from its NOTIFY
    (PostgresStore.Options.takeNotified off: the comparison);
    each latency round also runs the floor — the least any responder must do (Latency.swift's
    Floor) — under the same load, the latency's ceiling on this machine (--no-floor: not); each
    run's line says how busy the cores were, whose work it was, and how long tasks waited for one;
    --no-ceiling runs the throughput part's workers alone, without pgbench (to compare two builds
    of Usher: their CPU per message, server buffers per message and rate, round by round, in less
    time; no per-statement table, which sets Usher's statements beside pgbench's);
    --only cost (not in a full run) measures the server CPU of one message answered alone — Usher's
    batch of one against the floor's read and reply — and each of Usher's statements' share of it
    (StatementCost.swift; --messages N, default 4,000);
    --commit-sessions N gives each worker N commit connections and N batches written at once
    (default 2: PostgresStore.Options.commitSessions, Worker.Options.writesInFlight);
    --script writes the pgbench script (and FILE.defs, its -D values); --set adds a server setting
    (diagnosis); --keep leaves the server and the template databases up after the throughput part.
    USHER_PG_BENCH_LOG_STATEMENTS=1 logs every statement with its parameters in the server log,
    to compare the store's values with pgbench's. USHER_PG_BENCH_DUMP=FILE writes each latency
    round's messages (seq, id, commit time, latency in ms) to FILE, to see when the slow ones came.
    """
BenchArguments.check(usage: usage,
                     flags: ["--quick", "--profile", "--cold", "--keep", "--breakdown", "--no-floor", "--no-take", "--no-ceiling"],
                     values: ["--messages", "--workers", "--rounds", "--only", "--rate", "--seconds", "--feeder", "--script",
                              "--history", "--notify-window", "--set", "--commit-sessions"])

/// Lines appear as they are printed, also into a pipe or file.
func print(_ line: String = "") {
    Swift.print(line)
    fflush(nil)
}

let args = CommandLine.arguments
func option(_ name: String) -> String? {
    args.firstIndex(of: name).flatMap { args.indices.contains($0 + 1) ? args[$0 + 1] : nil }
}
let quick = args.contains("--quick")
let messages = option("--messages").flatMap(Int.init) ?? (quick ? 8_000 : 40_000)
let workerCounts = (option("--workers") ?? "1,2,4").split(separator: ",").compactMap { Int($0) }
let rounds = option("--rounds").flatMap(Int.init) ?? (quick ? 1 : 3)
let only = option("--only")
let rate = option("--rate").flatMap(Int.init) ?? 1_000
let latencySeconds = option("--seconds").flatMap(Int.init) ?? (quick ? 2 : 5)
/// `--feeder pgbench|store`: who writes the latency part's messages (Latency.Feeder).
let feeder = option("--feeder").flatMap(Latency.Feeder.init(rawValue:)) ?? .pgbench
let profileAll = args.contains("--profile")
let scriptPath = option("--script")
/// Messages already answered before the backlog (a database in service); `--cold`: none.
let history = args.contains("--cold") ? 0 : (option("--history").flatMap(Int.init) ?? messages)
let batchSize = 512   // Worker.Options.batchSize
/// `--notify-window S`: the workers' agent-notification window (default: the worker's, 10 s).
let notifyWindow = option("--notify-window").flatMap(Double.init)
/// `--commit-sessions N`: each worker's commit connections and batches written at once (diagnosis).
let commitSessions = option("--commit-sessions").flatMap(Int.init)
/// `--set name=value` (repeatable): extra server settings, for diagnosis (e.g. synchronous_commit=off).
let extraSettings: [String: String] = Dictionary(args.indices.filter { args[$0] == "--set" && $0 + 1 < args.count }.compactMap { i in
    let kv = args[i + 1].split(separator: "=", maxSplits: 1).map(String.init)
    return kv.count == 2 ? (kv[0], kv[1]) : nil
}, uniquingKeysWith: { $1 })

struct Sample {
    var usher: Double
    /// pgbench as measured, and as if its fetch of the batch's values cost nothing.
    var pgbench: Double
    var strict: Double
    var ratio: Double { usher / pgbench }
    var strictRatio: Double { usher / strict }
}

/// The best of `values`, then (over several rounds) their median and range: one round can be
/// caught by the VM's slow seconds, on either side.
func summary(_ values: [Double], _ digits: Int = 0, higherIsBetter: Bool = true) -> String {
    guard let best = higherIsBetter ? values.max() : values.min(), let lo = values.min(), let hi = values.max() else { return "–" }
    let sorted = values.sorted()
    let median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    return values.count == 1 ? fmt(best, digits)
        : "\(fmt(best, digits)) (median \(fmt(median, digits)), range \(fmt(lo, digits))–\(fmt(hi, digits)))"
}

func printProfile(_ usher: Profile, usherBatches: Int, usherSeconds: Double, usherCPU: Double, _ pg: Profile, pgBatches: Int,
                  pgSecondsPerBatch: Double, pgCPU: Double) {
    // Per batch: calls, rows per call, server time, shared buffers touched, WAL written.
    let width = 45
    func cell(_ r: Profile.Row?, _ batches: Int) -> String {
        guard let r, batches > 0 else { return String(repeating: " ", count: width - 1) + "–" }
        let calls = Double(r.calls) / Double(batches)
        let rows = r.calls > 0 ? Double(r.rows) / Double(r.calls) : 0
        let b = Double(batches)
        return fmt(calls, 1).leftPad(6) + fmt(rows, 0).leftPad(6) + fmt(r.milliseconds / b, 2).leftPad(9)
            + fmt(Double(r.buffers) / b, 0).leftPad(9) + fmt(r.walBytes / b / 1024, 1).leftPad(9) + "     "
    }
    func totals(_ ms: Double, _ buffers: Double, _ wal: Double) -> String {
        fmt(ms, 2).leftPad(21) + fmt(buffers, 0).leftPad(9) + fmt(wal / 1024, 1).leftPad(9) + "     "
    }
    var names: [String] = []
    for r in usher.rows + pg.rows where !names.contains(r.name) { names.append(r.name) }
    names.sort { (Profile.order.firstIndex(of: $0) ?? 99, $0) < (Profile.order.firstIndex(of: $1) ?? 99, $1) }
    print("    per batch, from pg_stat_statements (server execution time, shared buffers touched, WAL written)")
    print("    " + "".padding(toLength: 24, withPad: " ", startingAt: 0)
          + "usher".padding(toLength: width, withPad: " ", startingAt: 0) + "pgbench")
    print("    " + "statement".padding(toLength: 24, withPad: " ", startingAt: 0)
          + String(repeating: " calls  rows       ms  buffers   WAL kB     ", count: 2))
    var rest = (usher: Profile.Row(name: "", calls: 0, rows: 0, milliseconds: 0), pg: Profile.Row(name: "", calls: 0, rows: 0, milliseconds: 0))
    func add(_ r: Profile.Row?, to sum: inout Profile.Row) {
        guard let r else { return }
        sum.milliseconds += r.milliseconds
        sum.buffers += r.buffers
        sum.walBytes += r.walBytes
    }
    for n in names {
        let u = usher.row(n), p = pg.row(n)
        func small(_ r: Profile.Row?, _ batches: Int) -> Bool {
            guard let r else { return true }
            return Double(r.calls) / Double(max(1, batches)) < 0.5 && r.milliseconds / Double(max(1, batches)) < 0.05
        }
        if small(u, usherBatches) && small(p, pgBatches) {
            add(u, to: &rest.usher)
            add(p, to: &rest.pg)
            continue
        }
        print("    " + n.padding(toLength: 24, withPad: " ", startingAt: 0) + cell(u, usherBatches) + cell(p, pgBatches))
    }
    let ub = Double(max(1, usherBatches)), pb = Double(max(1, pgBatches))
    func label(_ s: String) -> String { "    " + s.padding(toLength: 24, withPad: " ", startingAt: 0) }
    print(label("(the rest, rarely run)")
          + totals(rest.usher.milliseconds / ub, Double(rest.usher.buffers) / ub, rest.usher.walBytes / ub)
          + totals(rest.pg.milliseconds / pb, Double(rest.pg.buffers) / pb, rest.pg.walBytes / pb))
    print(label("server total")
          + totals(usher.totalMilliseconds / ub, Double(usher.totalBuffers) / ub, usher.totalWALBytes / ub)
          + totals(pg.totalMilliseconds / pb, Double(pg.totalBuffers) / pb, pg.totalWALBytes / pb))
    print(label("wall / batch / worker") + fmt(usherSeconds * 1000 / ub, 2).leftPad(21).padding(toLength: width, withPad: " ", startingAt: 0)
          + fmt(pgSecondsPerBatch * 1000, 2).leftPad(21))
    print(label("client CPU / batch") + fmt(usherCPU * 1000 / ub, 2).leftPad(21).padding(toLength: width, withPad: " ", startingAt: 0)
          + fmt(pgCPU * 1000 / pb, 2).leftPad(21) + "   (the workers' process; pgbench)")
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}

func main() async throws {
    print("usher-pg-bench (\(quick ? "quick" : "full") run; \(ProcessInfo.processInfo.activeProcessorCount) cores; \(rounds) round\(rounds == 1 ? "" : "s")): "
          + args.joined(separator: " "))
    let server = try BenchServer(extra: extraSettings)
    print("server: \(try server.describeSettings())")
    let (dir, bot) = try TestBot.make(prefix: "usher-pg-bench")
    defer { try? FileManager.default.removeItem(at: dir) }
    let started = ContinuousClock.now
    let sql = try await Backlog.createHistory(server, count: history, bot: bot)
    print("history: \(fmt(Double(history))) messages answered before the backlog\(history == 0 ? " (--cold: Usher's tables analyzed empty)" : "")"
          + " (\(fmt((ContinuousClock.now - started) / .seconds(1), 1)) s to build)")

    if only == "cost" {
        try await StatementCost.run(server, sql: sql, bot: bot, messages: option("--messages").flatMap(Int.init) ?? (quick ? 1_000 : 4_000),
                                    rounds: rounds)
        return
    }

    var throughput: [Int: [Sample]] = [:]
    if only == nil || only == "throughput" {
        let started = ContinuousClock.now
        let backlog = try Backlog.create(server, count: messages, sql: sql)
        let ceiling = Ceiling(backlog: backlog, bot: bot, batchSize: batchSize)
        // Each conversation's share slot as the server computes it (PGSQL.shareSlot): pgbench's
        // client c of w works through share c of w, as worker c of w does.
        var slot: [String: Int64] = [:]
        for line in try server.psql("SELECT id, hashtext(id)::int8 & 2147483647 FROM conversations WHERE id LIKE 'c%'",
                                    database: Backlog.template).split(separator: "\n") {
            let f = line.split(separator: "\t")
            if f.count == 2, let v = Int64(f[1]) { slot[String(f[0])] = v }
        }
        var scripts: [Int: Ceiling.Script] = [:]
        for w in Set(workerCounts + [1]) { scripts[w] = try ceiling.script(worker: "pgbench", clients: w, slot: slot) }
        let script = scripts[1]!
        if let scriptPath {
            var text = script.text
            text += "\n-- -D definitions (values every batch shares):\n"
            for (k, v) in script.constants.sorted(by: { $0.key < $1.key }) { text += "--   \(k)=\(v.prefix(120))\(v.count > 120 ? "…" : "")\n" }
            try text.write(toFile: scriptPath, atomically: true, encoding: .utf8)
            // The -D definitions in full, one a line (for `mapfile`).
            try script.constants.sorted(by: { $0.key < $1.key }).map { "-D\n\($0.key)=\($0.value)\n" }.joined()
                .write(toFile: scriptPath + ".defs", atomically: true, encoding: .utf8)
            print("pgbench script written to \(scriptPath)")
        }
        let pgTemplate = "usher_backlog_pgbench"
        for (w, script) in scripts {
            try server.copy(Backlog.template, to: pgTemplate + "_\(w)")
            try Ceiling.load(script, into: pgTemplate + "_\(w)", server)
        }
        let statements = script.text.split(separator: "\n").filter { $0.hasSuffix(";") }.count
        print("backlog: \(fmt(Double(messages))) messages in \(fmt(Double((messages + 3) / 4))) conversations of 4 "
              + "(\(fmt((ContinuousClock.now - started) / .seconds(1), 1)) s to build); pgbench: \(script.batches) batches of "
              + "\(batchSize), \(statements) statements each + 1 fetch")

        for round in 1...rounds {
            for w in workerCounts {
                let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first ?? "?"
                // Usher.
                let db = "usher_run"
                try server.copy(Backlog.template, to: db)
                try server.checkpoint()
                try Profile.reset(server)
                let u = try await UsherRun.run(server, backlog, database: db, workers: w, bot: bot, notificationWindow: notifyWindow,
                                               commitSessions: commitSessions)
                let usherServer = u.serverCPU
                let up = try Profile.read(server, database: db, sql: backlog.sql)
                server.drop(db)
                // Usher's CPU per message: all of it, the workers' process's and the server's.
                let n = Double(backlog.count)
                let usherCPU = "\(fmt(1e6 * (u.cpu + usherServer) / n, 1)) µs (workers \(fmt(1e6 * u.cpu / n, 1)), server \(fmt(1e6 * usherServer / n, 1)))"
                if args.contains("--no-ceiling") {
                    print("round \(round), \(w) worker\(w == 1 ? " " : "s"): usher \(fmt(u.messagesPerSecond)) msg/s (\(fmt(u.seconds, 2)) s); "
                          + "CPU per message \(usherCPU); server buffers per message \(fmt(Double(up.totalBuffers) / n, 1))   [load before: \(load)]")
                    continue
                }
                // pgbench on the same batches (whole batches, split evenly between the clients).
                let pdb = "usher_pgbench"
                try server.copy(pgTemplate + "_\(w)", to: pdb)
                try server.checkpoint()
                try Profile.reset(server)
                let script = scripts[w]!
                let perClient = script.batches / w
                let pgServerCPU = server.serverCPUSeconds()
                let (tps, pgCPU) = try Ceiling.pgbench(server, script: script.text, constants: script.constants, database: pdb,
                                                   clients: w, perClient: perClient)
                try await Task.sleep(for: .milliseconds(500))   // the backends end and the postmaster counts their CPU
                let pgServer = server.serverCPUSeconds() - pgServerCPU
                let pp = try Profile.read(server, database: pdb, sql: backlog.sql)
                // The fetch alone (the bench's own statement inside the ceiling's transactions),
                // at the same concurrency, over at least 40 batches a client.
                let fetchRuns = max(perClient, 40)
                let (fetchTPS, _) = try Ceiling.pgbench(server, script: script.fetchOnly, constants: [:], database: pdb,
                                                        clients: w, perClient: fetchRuns)
                server.drop(pdb)
                // Per batch and client: the whole transaction, the fetch alone, and without the fetch.
                let batchMs = 1000 * Double(w) / tps
                let fetchMs = 1000 * Double(w) / fetchTPS
                let ceilingRate = tps * Double(batchSize)
                let strictRate = Double(w) * 1000 / max(batchMs - fetchMs, 1e-9) * Double(batchSize)
                let sample = Sample(usher: u.messagesPerSecond, pgbench: ceilingRate, strict: strictRate)
                throughput[w, default: []].append(sample)
                print("round \(round), \(w) worker\(w == 1 ? " " : "s"): usher \(fmt(u.messagesPerSecond)) msg/s "
                      + "(\(fmt(u.seconds, 2)) s\(u.conflicts > 0 ? ", \(u.conflicts) conflicts" : ""))   pgbench \(w) client\(w == 1 ? "" : "s"): "
                      + "\(fmt(ceilingRate)) msg/s (\(fmt(tps, 1)) tps × \(batchSize)), \(fmt(strictRate)) without its fetch "
                      + "(\(fmt(fetchMs, 2)) of \(fmt(batchMs, 1)) ms a batch)   ratio \(fmt(sample.strictRatio, 2)) "
                      + "(\(fmt(sample.ratio, 2)) to pgbench as measured)   [load before: \(load)]")
                // CPU per message, both sides: on a machine whose cores the server fills, the
                // rate can be at most cores ÷ this.
                let pgMessages = Double(perClient * w * batchSize)
                print("    CPU per message: usher \(usherCPU);   pgbench \(fmt(1e6 * (pgCPU + pgServer) / pgMessages, 1)) µs "
                      + "(client \(fmt(1e6 * pgCPU / pgMessages, 1)), server \(fmt(1e6 * pgServer / pgMessages, 1)));   "
                      + "busy: usher \(fmt((u.cpu + usherServer) / u.seconds, 2)) cores, pgbench \(fmt((pgCPU + pgServer) * tps / Double(perClient * w), 2)) cores")
                if round == 1 || profileAll {
                    let usherBatches = up.row("insertProcessed")?.calls ?? 0
                    printProfile(up, usherBatches: usherBatches, usherSeconds: u.seconds * Double(w), usherCPU: u.cpu, pp,
                                 pgBatches: perClient * w, pgSecondsPerBatch: Double(w) / tps, pgCPU: pgCPU)
                }
            }
        }
        if args.contains("--keep") {
            // Debugging: leave the server and the template databases for psql, until killed.
            print("--keep: server at \(server.server.directory) (databases \(Backlog.template), \(pgTemplate)_<clients>)")
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        for w in scripts.keys { server.drop(pgTemplate + "_\(w)") }
        server.drop(Backlog.template)
    }

    var latencies: [Latency.Result] = []
    var floors: [Latency.Result] = []
    if only == nil || only == "latency" {
        for round in 1...rounds {
            let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first ?? "?"
            let l = try await Latency.run(server, responder: .usher(bot), rate: rate, seconds: latencySeconds, writers: 4,
                                          feeder: feeder, breakdown: args.contains("--breakdown"),
                                          // The breakdown splits at the read (its lease): every message read.
                                          takeNotified: !args.contains("--no-take") && !args.contains("--breakdown"),
                                          commitSessions: commitSessions)
            latencies.append(l)
            print("round \(round), latency at \(fmt(Double(rate))) msg/s offered (\(fmt(l.offered)) achieved by 4 writers, "
                  + "\(l.count) replies): commit → commit p50 \(fmt(l.p50, 2)) ms, p99 \(fmt(l.p99, 2)) ms, max \(fmt(l.max, 1)) ms; "
                  + "message time → reply time p50 \(fmt(l.clientP50, 2)) ms, p99 \(fmt(l.clientP99, 2)) ms   [load before: \(load)]")
            print("    \(fmt(Double(l.takenFromNotifications))) of the messages taken from their notification without a read; "
                  + "the worker's process \(fmt(l.clientCPU * 1e6 / Double(max(1, l.count)), 1)) µs of CPU and "
                  + "\(fmt(Double(l.clientSwitches) / Double(max(1, l.count)), 1)) context switches a message; commits "
                  + l.notCommitted.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                  + "; " + l.cores.text)
            if !l.halves.isEmpty {
                let f = l.halves.split(separator: "\t")
                if f.count == 3 {
                    print("    first messages (\(f[2])): message commit → read (lease commit) p50/p90/p99 \(f[0]) ms; read → reply commit \(f[1]) ms")
                }
            }
            if !args.contains("--no-floor") {
                let f = try await Latency.run(server, responder: .floor, rate: rate, seconds: latencySeconds, writers: 4, feeder: feeder)
                floors.append(f)
                print("    the floor, in the same round (\(fmt(f.offered)) msg/s achieved, \(f.count) replies): commit → commit "
                      + "p50 \(fmt(f.p50, 2)) ms, p99 \(fmt(f.p99, 2)) ms, max \(fmt(f.max, 1)) ms; "
                      + "its process \(fmt(f.clientCPU * 1e6 / Double(max(1, f.count)), 1)) µs of CPU a message; " + f.cores.text)
            }
            if round == 1 || profileAll {
                // Per group commit: what the worker's statements cost on the server.
                let commits = max(1, l.profile.row("insertProcessed")?.calls ?? 1)
                print("    \(commits) group commits (\(fmt(Double(l.count) / Double(commits), 1)) messages each); server time per commit:")
                for r in l.profile.rows where Double(r.calls) / Double(commits) >= 0.05 && !r.name.hasPrefix("other")
                    && r.name != "BEGIN" && r.name != "COMMIT" {
                    print("    " + r.name.padding(toLength: 24, withPad: " ", startingAt: 0) + fmt(Double(r.calls) / Double(commits), 2).leftPad(7)
                          + " calls" + fmt(r.milliseconds / Double(commits), 3).leftPad(9) + " ms")
                }
                print("    " + "all (with the writers')".padding(toLength: 24, withPad: " ", startingAt: 0) + fmt(l.profile.totalMilliseconds / Double(commits), 3).leftPad(22) + " ms")
            }
        }
    }

    print("")
    print("summary (best, median and range over \(rounds) round\(rounds == 1 ? "" : "s")):")
    for w in workerCounts {
        guard let s = throughput[w] else { continue }
        print("  \(w) worker\(w == 1 ? " " : "s"): usher \(summary(s.map(\.usher))) msg/s; pgbench \(w) client\(w == 1 ? "" : "s") "
              + "\(summary(s.map(\.pgbench))) msg/s, without its fetch \(summary(s.map(\.strict))); "
              + "ratio \(summary(s.map(\.strictRatio), 2)) (to pgbench as measured \(summary(s.map(\.ratio), 2)))   [target ≥ 0.8]")
    }
    if !latencies.isEmpty {
        print("  latency at \(fmt(Double(rate))) msg/s, commit → commit: p50 \(summary(latencies.map(\.p50), 2, higherIsBetter: false)) ms, "
              + "p99 \(summary(latencies.map(\.p99), 2, higherIsBetter: false)) ms   [target p99 ≤ 5 ms]")
        print("  latency, message time → reply time: p50 \(summary(latencies.map(\.clientP50), 2, higherIsBetter: false)) ms, "
              + "p99 \(summary(latencies.map(\.clientP99), 2, higherIsBetter: false)) ms")
        if !floors.isEmpty {
            print("  the floor at \(fmt(Double(rate))) msg/s, commit → commit: p50 \(summary(floors.map(\.p50), 2, higherIsBetter: false)) ms, "
                  + "p99 \(summary(floors.map(\.p99), 2, higherIsBetter: false)) ms")
        }
    }
}

let done = DispatchSemaphore(value: 0)
nonisolated(unsafe) var failed = false
Task.detached {
    do { try await main() } catch {
        print("usher-pg-bench failed: \(error)")
        failed = true
    }
    done.signal()
}
done.wait()
exit(failed ? 1 : 0)
