// usher-store-bench — SQLite store throughput against a bare C loop of the same transactions,
// group commit, and the wake-up latency of waitForChanges. Numbers, not tests.
//
//   swift run -c release usher-store-bench [--messages N] [--grouped N] [--conversations N] [--rounds N]
//                                          [--quick] [--only bare|hop|inline|group|wake] [--split]
//   usher-store-bench --micro          cost of each statement of a commit
//   usher-store-bench --micro-json     the state JSON codec
// The database goes in $TMPDIR (default /tmp): TMPDIR=/dev/shm measures without the disk.
import Foundation
import UsherSQLite
import UsherStore

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--writer" {
    WakeLatency.writerMain(path: arguments[1], count: Int(arguments[2])!, gapMs: Int(arguments[3])!)
    exit(0)
}
func option(_ name: String, _ fallback: Int) -> Int {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count, let v = Int(arguments[i + 1]) else { return fallback }
    return v
}
let quick = arguments.contains("--quick")
let perMessage = option("--messages", quick ? 5_000 : 20_000)
let grouped = option("--grouped", quick ? 50_000 : 200_000)
let conversations = option("--conversations", 1_000)
let rounds = option("--rounds", quick ? 1 : 3)
/// `--only bare|hop|inline|group|wake` runs one part (for profiling).
let only: String? = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
func runs(_ part: String) -> Bool { only == nil || only == part }
let split = arguments.contains("--split")

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
print("file: \(path) (WAL)\n")

func best(_ body: () async throws -> Double) async throws -> Double {
    var top = 0.0
    for _ in 0..<rounds { top = max(top, try await body()) }
    return top
}
func rate(_ v: Double) -> String { String(format: "%9.0f msg/s  (%6.2f µs/msg)", v, 1e6 / v) }

for sync in [SQLiteStore.Options.Synchronous.normal, .full] {
    let n = sync == .normal ? perMessage : perMessage / 4
    let g = sync == .normal ? grouped : grouped / 4
    let work = Workload(messages: n, conversations: conversations)
    let groupWork = Workload(messages: g, conversations: conversations)
    let options = SQLiteStore.Options(synchronous: sync)
    print("synchronous=\(sync.rawValue)  — per message: pending(limit 1) + state + commit(1 reply), \(n) messages")

    let bare = !runs("bare") ? 1 : try await best {
        try await work.prepare(path: path)
        return BareLoop.run(path: path, messages: n, synchronous: sync.rawValue)
    }
    print("  bare C loop, same SQL (ceiling)        \(rate(bare))")

    let hop = !runs("hop") ? 1 : try await best {
        try await work.prepare(path: path)
        let store = try await SQLiteStore(path: path, options: options)
        defer { Task { try? await store.close() } }
        return try await StoreLoop.perMessage(store, messages: n)
    }
    print("  SQLiteStore, thread hop per call       \(rate(hop))   \(String(format: "%.2f×", hop / bare)) of bare")

    let inline = !runs("inline") ? 1 : try await best {
        try await work.prepare(path: path)
        let store = try await SQLiteStore(path: path, options: options)
        defer { Task { try? await store.close() } }
        return try await withTaskExecutorPreference(store.taskExecutor) {
            try await StoreLoop.perMessage(store, messages: n)
        }
    }
    print("  SQLiteStore, on its executor           \(rate(inline))   \(String(format: "%.2f×", inline / bare)) of bare")

    print("  group commit, batch 256, \(g) messages: pending(limit 256) + states(batch) + commit(batch:)")
    var bareRun: BareLoop.Run?
    let groupBare = !runs("group") ? 1 : try await best {
        try await groupWork.prepare(path: path)
        let run = BareLoop.grouped(path: path, messages: g, synchronous: sync.rawValue, batch: 256)
        if run.rate > bareRun?.rate ?? 0 { bareRun = run }
        return run.rate
    }
    print("  bare C loop, same SQL (ceiling)        \(rate(groupBare))")
    if let bareRun {
        print(String(format: "      of which COMMIT (WAL writes, checkpoints) %.2f µs/msg; %.2f pages written/msg",
                     bareRun.commitMicros, bareRun.pagesPerMessage))
    }
    let groupHop = !runs("group") ? 1 : try await best {
        try await groupWork.prepare(path: path)
        let store = try await SQLiteStore(path: path, options: options)
        defer { Task { try? await store.close() } }
        return try await StoreLoop.grouped(store, messages: g, batch: 256, split: split)
    }
    print("  SQLiteStore, thread hop per call       \(rate(groupHop))   \(String(format: "%.2f×", groupHop / groupBare)) of bare")
    let groupInline = !runs("group") ? 1 : try await best {
        try await groupWork.prepare(path: path)
        let store = try await SQLiteStore(path: path, options: options)
        defer { Task { try? await store.close() } }
        return try await withTaskExecutorPreference(store.taskExecutor) {
            try await StoreLoop.grouped(store, messages: g, batch: 256, split: split)
        }
    }
    print("  SQLiteStore, on its executor           \(rate(groupInline))   \(String(format: "%.2f×", groupInline / groupBare)) of bare\n")
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
