// usher-store-bench — SQLite store throughput against a bare C loop of the same transactions,
// group commit, the worker end to end (deciding too) against the same loops, and the wake-up
// latency of waitForChanges. Numbers, not tests.
//
//   swift run -c release usher-store-bench [--messages N] [--grouped N] [--conversations N] [--rounds N]
//                                          [--quick] [--only bare|hop|inline|worker|group|group-bare|wake] [--split]
//                                          [--checkpoint-pages N] [--cache-kib N] [--mmap-mib N] [--page-size N]
//   usher-store-bench --micro          cost of each statement of a commit
//   usher-store-bench --micro-json     the state JSON codec
// The database goes in $TMPDIR (default /tmp): TMPDIR=/dev/shm measures without the disk.
import Foundation
@_spi(Bench) import UsherSQLite
import UsherBenchSupport
import UsherStore

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--writer" {
    WakeLatency.writerMain(path: arguments[1], count: Int(arguments[2])!, gapMs: Int(arguments[3])!)
    exit(0)
}
BenchArguments.check(usage: """
    usher-store-bench [--messages N] [--grouped N] [--conversations N] [--rounds N] [--quick]
                      [--only bare|hop|inline|worker|group|group-bare|wake] [--split]
                      [--checkpoint-pages N] [--cache-kib N] [--mmap-mib N] [--page-size N]
    usher-store-bench --micro [--messages N]   cost of each statement of a commit
    usher-store-bench --micro-json             the state JSON codec
    The database goes in $TMPDIR (default /tmp): TMPDIR=/dev/shm measures without the disk.
    """, flags: ["--quick", "--split", "--micro", "--micro-json"],
    values: ["--messages", "--grouped", "--conversations", "--rounds", "--only", "--checkpoint-pages", "--cache-kib",
             "--mmap-mib", "--page-size"], arguments)
func option(_ name: String, _ fallback: Int) -> Int {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count, let v = Int(arguments[i + 1]) else { return fallback }
    return v
}
let quick = arguments.contains("--quick")
let perMessage = option("--messages", quick ? 5_000 : 20_000)
let grouped = option("--grouped", quick ? 50_000 : 200_000)
let conversations = option("--conversations", 1_000)
let rounds = option("--rounds", quick ? 1 : 3)
/// `--only bare|hop|inline|worker|group|group-bare|wake` runs one part (for profiling; `group-bare`: the
/// group-commit bare loop alone).
let only: String? = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
func runs(_ part: String) -> Bool { only == nil || only == part }
let split = arguments.contains("--split")
/// The checkpoint arrangement and tuning, the same for the bare loops and the store.
var setup = BareLoop.Setup()
setup.checkpointPages = option("--checkpoint-pages", setup.checkpointPages)
setup.tuning.cacheKiB = option("--cache-kib", setup.tuning.cacheKiB)
if arguments.contains("--mmap-mib") { setup.tuning.mmapMiB = option("--mmap-mib", 0) }
if arguments.contains("--page-size") { setup.tuning.pageSize = option("--page-size", 4096) }

let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-store-bench-\(getpid())")
try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: dir) }
let path = dir.appendingPathComponent("bench.db").path

if arguments.contains("--micro-json") {
    MicroJSON.run()
    try? FileManager.default.removeItem(at: dir)
    exit(0)
}
if arguments.contains("--micro") {
    try await Micro.run(path: path, n: option("--messages", 20_000))
    try? FileManager.default.removeItem(at: dir)
    exit(0)
}

print("usher-store-bench: SQLite \(SQLiteStore.sqliteVersion), \(ProcessInfo.processInfo.activeProcessorCount) cores, "
      + "\(conversations) conversations, best of \(rounds)")
print("file: \(path) (WAL)")
print(setup.checkpointPages > 0
      ? "checkpoints: off the commit path — autocheckpoint off, a checkpointer thread at \(setup.checkpointPages) WAL pages "
        + "(the writer itself at \(setup.checkpointPages * 4)), for the store and the bare loops alike"
      : "checkpoints: SQLite's automatic ones (1,000 pages) inside COMMIT, for the store and the bare loops alike")
print("cache_size \(setup.tuning.cacheKiB) KiB" + (setup.tuning.mmapMiB.map { ", mmap_size \($0) MiB (bare loops only)" } ?? "")
      + (setup.tuning.pageSize.map { ", page_size \($0)" } ?? "") + "\n")

func best(_ body: () async throws -> Double) async throws -> Double {
    var top = 0.0
    for _ in 0..<rounds { top = max(top, try await body()) }
    return top
}
/// A fresh database with `work`, a store on it running `body` (on the store's executor when
/// `inline`), then the store closed — before the next round deletes the file.
func onStore(_ work: Workload, _ options: SQLiteStore.Options, inline: Bool,
             _ body: @escaping @Sendable (SQLiteStore) async throws -> Double) async throws -> (Double, SQLiteStore.Statistics) {
    try await work.prepare(path: path, pageSize: setup.tuning.pageSize)
    let store = try await SQLiteStore(path: path, options: options)
    do {
        let rate = inline ? try await withTaskExecutorPreference(store.taskExecutor) { try await body(store) }
                          : try await body(store)
        let statistics = store.statistics
        try await store.close()
        return (rate, statistics)
    } catch {
        try? await store.close()
        throw error
    }
}
func rate(_ v: Double) -> String { String(format: "%9.0f msg/s  (%6.2f µs/msg)", v, 1e6 / v) }

/// One result line: the rate and, against `ceiling`, the ratio; a part `--only` left out says so.
func line(_ label: String, _ v: Double?, of ceiling: Double? = nil) {
    let name = "  " + label.padding(toLength: 37, withPad: " ", startingAt: 0)
    guard let v else { print(name + "        –   (not run: --only \(only ?? ""))"); return }
    print(name + rate(v) + (ceiling.map { String(format: "   %.2f× of bare", v / $0) } ?? ""))
}

for sync in [SQLiteStore.Options.Synchronous.normal, .full] {
    let n = sync == .normal ? perMessage : perMessage / 4
    let g = sync == .normal ? grouped : grouped / 4
    let work = Workload(messages: n, conversations: conversations)
    let groupWork = Workload(messages: g, conversations: conversations)
    let options = SQLiteStore.Options(synchronous: sync, cacheKiB: setup.tuning.cacheKiB, checkpointPages: setup.checkpointPages)
    print("synchronous=\(sync.rawValue)  — per message: pending(limit 1) + state + commit(1 reply), \(n) messages")

    let bare: Double? = !runs("bare") ? nil : try await best {
        try await work.prepare(path: path, pageSize: setup.tuning.pageSize)
        return try BareLoop.run(path: path, messages: n, synchronous: sync.rawValue, setup: setup)
    }
    line("bare C loop, same SQL (ceiling)", bare)

    let hop: Double? = !runs("hop") ? nil : try await best {
        try await onStore(work, options, inline: false) { try await StoreLoop.perMessage($0, messages: n) }.0
    }
    line("SQLiteStore, thread hop per call", hop, of: bare)

    let inline: Double? = !runs("inline") ? nil : try await best {
        try await onStore(work, options, inline: true) { try await StoreLoop.perMessage($0, messages: n) }.0
    }
    line("SQLiteStore, on its executor", inline, of: bare)

    let worker: Double? = !runs("worker") ? nil : try await best {
        try await work.prepare(path: path, pageSize: setup.tuning.pageSize)
        return try await WorkerLoop.run(path: path, messages: n, options: options, groupCommit: false, batch: 256)
    }
    line("the worker, deciding too", worker, of: bare)

    print("  group commit, batch 256, \(g) messages: pending(limit 256) + states(batch) + commit(batch:)")
    var bareRun: BareLoop.Run?
    let groupBare: Double? = !(runs("group") || only == "group-bare") ? nil : try await best {
        try await groupWork.prepare(path: path, pageSize: setup.tuning.pageSize)
        let run = try BareLoop.grouped(path: path, messages: g, synchronous: sync.rawValue, batch: 256, setup: setup)
        if run.rate > bareRun?.rate ?? 0 { bareRun = run }
        return run.rate
    }
    line("bare C loop, same SQL (ceiling)", groupBare)
    if let bareRun {
        print(String(format: "      of which COMMIT (WAL writes, checkpoints) %.2f µs/msg; %.2f pages written/msg",
                     bareRun.commitMicros, bareRun.pagesPerMessage))
        if let c = bareRun.checkpoints {
            print("      checkpointer: \(c.checkpoints) checkpoints (\(c.busy) busy), \(c.restarts) RESTART, "
                  + "\(c.writerCheckpoints) by the writer; largest WAL \(c.largestWAL) pages")
        }
    }
    let groupHop: Double? = !runs("group") ? nil : try await best {
        try await onStore(groupWork, options, inline: false) { try await StoreLoop.grouped($0, messages: g, batch: 256, split: split) }.0
    }
    line("SQLiteStore, thread hop per call", groupHop, of: groupBare)
    var storeStatistics: SQLiteStore.Statistics?
    let groupInline: Double? = !runs("group") ? nil : try await best {
        let (rate, statistics) = try await onStore(groupWork, options, inline: true) {
            try await StoreLoop.grouped($0, messages: g, batch: 256, split: split)
        }
        if storeStatistics == nil { storeStatistics = statistics }
        return rate
    }
    line("SQLiteStore, on its executor", groupInline, of: groupBare)
    let groupWorker: Double? = !(runs("group") || only == "worker") ? nil : try await best {
        try await groupWork.prepare(path: path, pageSize: setup.tuning.pageSize)
        return try await WorkerLoop.run(path: path, messages: g, options: options, groupCommit: true, batch: 256)
    }
    line("the worker, deciding too", groupWorker, of: groupBare)
    if let s = storeStatistics, setup.checkpointPages > 0 {
        print("      its checkpointer (one round): \(s.checkpoints) checkpoints; largest WAL \(s.largestWAL) pages")
    }
    print()
}

if runs("wake") {
print("wake-up latency: message committed → waitForChanges returns (poll 2 ms, 20 ms when idle > 1 s)")
try await Workload(messages: 0, conversations: 1).prepare(path: path)
do {
    let store = try await SQLiteStore(path: path)
    let writer = RawDB(path: path)
    WakeLatency.ensureConversation(writer)
    writer.close()
    let same = try await WakeLatency.sameStore(store, samples: quick ? 50 : 200, gap: .milliseconds(3))
    print("  same SQLiteStore (in-process signal)          \(same.line)")
    let active = try await WakeLatency.otherConnection(store, path: path, samples: quick ? 50 : 200, gap: .milliseconds(5))
    print("  other connection, messages every 5 ms         \(active.line)")
    let process = try await WakeLatency.otherProcess(store, path: path, samples: quick ? 30 : 100, gapMs: 7)
    print("  other process, messages every 7 ms            \(process.line)")
    let idle = try await WakeLatency.otherConnection(store, path: path, samples: quick ? 4 : 10, gap: .milliseconds(1_300))
    print("  other connection, idle (a message per 1.3 s)  \(idle.line)")
    print("  waitForChanges polls so far: \(store.statistics.polls)")
    try await store.close()
}
}
