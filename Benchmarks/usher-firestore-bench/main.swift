// usher-firestore-bench — the worker on Google's Firestore emulator against a bare REST loop of
// the same commits on the same emulator, in the same run (BENCHMARKS.md, "The worker on
// Firestore"). Needs the emulator (google-cloud-cli-firestore-emulator, Java 17); starts it on a
// free loopback port and stops it at exit.
import Foundation
import UsherBenchSupport
import UsherFirestore
import UsherFirestoreTestServer
import UsherHTTP
import UsherJSON
import UsherRuntime
import UsherStore
import UsherTestSupport

let usage = """
        swift build -c release --product usher-firestore-bench
        .build/release/usher-firestore-bench [--messages N] [--conversations C] [--rounds R]
                                             [--rate 50] [--seconds 20] [--only throughput|latency]

    Throughput: a backlog of N messages (default 2,000) in C conversations (default 200), written
    as the seed app writes them, answered by one worker (TestBot.oneReply: one reply each), against
    the ceiling: a bare loop of the same commits over REST — per message the reply created with
    exists=false, the state document and the conversation's messageCount increment under
    preconditions, 8 conversations at once (as the worker's commits go) — with no reads and no
    decisions. After one unmeasured round of each (the emulator's JVM warms up), R rounds (default
    3), the two sides in turns, each first every other round; the summary gives each side's median.
    Latency: customers write --rate messages a second (default 50) for --seconds (default 20)
    into 50 conversations; from each customer message's write to its reply's write, both by the
    emulator's clock (the documents' createTime), p50 and p99.
    """

BenchArguments.check(usage: usage, flags: [], values: ["--messages", "--conversations", "--rounds", "--rate", "--seconds", "--only"])
func value(_ name: String, _ fallback: Int) -> Int {
    let a = CommandLine.arguments
    return a.firstIndex(of: name).flatMap { Int(a[$0 + 1]) } ?? fallback
}
let messages = value("--messages", 2_000), conversations = value("--conversations", 200), rounds = value("--rounds", 3)
let rate = value("--rate", 50), seconds = value("--seconds", 20)
let only = CommandLine.arguments.firstIndex(of: "--only").map { CommandLine.arguments[$0 + 1] }

let emulator = try FirestoreEmulator()
let http = HTTPClient(connections: 8)

/// Raw REST, as the bare loop and the app write: no Usher code between the bench and the emulator.
struct REST {
    let project: String
    var root: String { "projects/\(project)/databases/(default)/documents" }
    func post(_ path: String, _ body: String) async throws -> JSONValue {
        let r = try await http.send(HTTPRequest(method: "POST", url: "http://\(emulator.host)/v1/\(root)\(path)",
                                                headers: [("Content-Type", "application/json"), ("Authorization", "Bearer owner")],
                                                body: Array(body.utf8)))
        let json = try r.body.withUnsafeBufferPointer { try JSONReader.parse($0) }
        guard r.status == 200 else { throw NSError(domain: "firestore", code: r.status, userInfo: [NSLocalizedDescriptionKey: "\(r.status): \(String(decoding: r.body, as: UTF8.self))"]) }
        return json
    }
    static func quote(_ s: String) -> String { var w = JSONWriter(); w.string(s); return w.text }
    static func time(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: d)
    }
    /// The customer message as the app writes it (and its conversation document, the first time).
    func customerWrites(_ c: Int, _ k: Int, at: Date) -> [String] {
        var writes: [String] = []
        if k == 0 {
            writes.append(#"{"update":{"name":"\#(root)/conversations/c\#(c)","fields":{"userId":{"stringValue":"c\#(c)"},"isAssignedToAgent":{"booleanValue":false},"messageCount":{"integerValue":"0"}}},"currentDocument":{"exists":false}}"#)
        }
        writes.append(#"{"update":{"name":"\#(root)/conversations/c\#(c)/messages/m\#(k)","fields":{"senderType":{"stringValue":"customer"},"content":{"stringValue":"message \#(k)"},"timestamp":{"timestampValue":"\#(REST.time(at))"}}}}"#)
        return writes
    }
    func batchWrite(_ writes: [String]) async throws {
        for chunk in stride(from: 0, to: writes.count, by: 400) {
            _ = try await post(":batchWrite", #"{"writes":["# + writes[chunk..<min(writes.count, chunk + 400)].joined(separator: ",") + "]}")
        }
    }
}

/// A backlog of `messages` in `conversations`, times increasing.
func backlog(_ rest: REST) async throws {
    let t0 = Date().addingTimeInterval(-3600)
    var writes: [String] = []
    let per = max(1, messages / conversations)
    for k in 0..<per { for c in 0..<conversations { writes += rest.customerWrites(c, k, at: t0.addingTimeInterval(Double(k * conversations + c) / 1000)) } }
    try await rest.batchWrite(writes)
}

/// This process's CPU time (user and system), seconds: Usher's own cost beside the emulator's.
func processCPU() -> Double {
    var ru = rusage()
    getrusage(RUSAGE_SELF.rawValue, &ru)
    return Double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + Double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6
}
nonisolated(unsafe) var usherCPU: [Double] = []
/// Per round: Usher's REST calls per message, by method.
nonisolated(unsafe) var usherCalls: [String] = []

/// Usher: one worker, from its start until every message is committed.
func usherRound() async throws -> Double {
    let rest = REST(project: emulator.project("usher"))
    try await backlog(rest)
    let store = try await FirestoreStore.open(StoreRequest(url: "firestore://\(rest.project)", worker: true, start: .beginning),
                                              environment: ["FIRESTORE_EMULATOR_HOST": emulator.host])
    let bot = try BotRuntime(path: try temporaryBot(TestBot.oneReply).path)
    var options = Worker.Options()
    options.idleWait = .milliseconds(5)
    let worker = Worker(store: store, bots: [bot], options: options, log: Logger(minimum: .error))
    let total = conversations * max(1, messages / conversations)
    let cpu0 = processCPU()
    let start = ContinuousClock.now
    let task = Task { try await worker.run() }
    while Int(worker.metrics.value("usher_commits_total", ["bot": bot.id, "result": "committed"]) ?? 0) < total {
        try await Task.sleep(for: .milliseconds(2))
    }
    let d = ContinuousClock.now - start
    worker.requestStop()
    try await task.value
    try await store.close()
    usherCPU.append((processCPU() - cpu0) / Double(total) * 1e6)
    usherCalls.append(store.requestCounts.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%.2f", Double($0.value) / Double(total)))" }.joined(separator: ", "))
    return Double(total) / (d / .seconds(1))
}

/// The ceiling: the same commits, bare.
func bareRound() async throws -> Double {
    let rest = REST(project: emulator.project("bare"))
    try await backlog(rest)
    let per = max(1, messages / conversations)
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        var next = 0
        func conversation(_ c: Int) async throws {
            var stateTime: String?
            var conversationTime: String?
            for k in 0..<per {
                let reply = #"{"update":{"name":"\#(rest.root)/conversations/c\#(c)/messages/usher-bare-m\#(k)-0","fields":{"senderType":{"stringValue":"system"},"content":{"stringValue":"one"},"timestamp":{"timestampValue":"\#(REST.time(Date()))"}}},"currentDocument":{"exists":false}}"#
                let statePre = stateTime.map { #"{"updateTime":"\#($0)"}"# } ?? #"{"exists":false}"#
                let state = #"{"update":{"name":"\#(rest.root)/usher/bare/states/c\#(c)","fields":{"state":{"stringValue":"{\"conversationID\":\"c\#(c)\",\"version\":\#(k + 1)}"},"version":{"integerValue":"\#(k + 1)"},"owner":{"stringValue":"bot"},"done":{"mapValue":{"fields":{"m\#(k)":{"timestampValue":"\#(REST.time(Date()))"}}}}}},"currentDocument":\#(statePre)}"#
                let convPre = conversationTime.map { #"{"updateTime":"\#($0)"}"# } ?? #"{"exists":true}"#
                let conv = #"{"update":{"name":"\#(rest.root)/conversations/c\#(c)","fields":{}},"updateMask":{"fieldPaths":[]},"updateTransforms":[{"fieldPath":"messageCount","increment":{"integerValue":"1"}}],"currentDocument":\#(convPre)}"#
                let answer = try await rest.post(":commit", #"{"writes":["# + [reply, state, conv].joined(separator: ",") + "]}")
                guard case let .array(results)? = answer["writeResults"]?.kind else { fatalError("commit without results") }
                if case let .string(t)? = results[1]["updateTime"]?.kind { stateTime = t }
                if case let .string(t)? = results[2]["updateTime"]?.kind { conversationTime = t }
            }
        }
        for _ in 0..<8 where next < conversations {
            let c = next; next += 1
            group.addTask { try await conversation(c) }
        }
        while try await group.next() != nil {
            if next < conversations {
                let c = next; next += 1
                group.addTask { try await conversation(c) }
            }
        }
    }
    let d = ContinuousClock.now - start
    return Double(per * conversations) / (d / .seconds(1))
}

func median(_ xs: [Double]) -> Double { let s = xs.sorted(); return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2 }
func fmt(_ x: Double) -> String { String(format: "%.0f", x) }

print("usher-firestore-bench: emulator at \(emulator.host); \(ProcessInfo.processInfo.activeProcessorCount) cores")
if only == nil || only == "throughput" {
    var usher: [Double] = [], bare: [Double] = []
    // The emulator's JVM speeds up for minutes as it compiles: one round of each, unmeasured,
    // then the two sides in turns, each going first every other round.
    _ = try await usherRound(); _ = try await bareRound()
    usherCPU = []; usherCalls = []
    for r in 1...rounds {
        var u = 0.0, b = 0.0
        if r % 2 == 1 { u = try await usherRound(); b = try await bareRound() } else { b = try await bareRound(); u = try await usherRound() }
        usher.append(u); bare.append(b)
        print("  round \(r): usher \(fmt(u)) msg/s, bare REST loop \(fmt(b)) msg/s, ratio \(String(format: "%.2f", u / b)); Usher's calls per message: \(usherCalls.last ?? "")")
    }
    print("throughput (\(conversations * max(1, messages / conversations)) messages, \(conversations) conversations): usher \(fmt(median(usher))) msg/s, "
          + "bare \(fmt(median(bare))) msg/s, ratio \(String(format: "%.2f", median(usher) / median(bare))) (median of \(rounds)); "
          + "Usher's own CPU \(fmt(median(usherCPU))) µs per message")
}

if only == nil || only == "latency" {
    let rest = REST(project: emulator.project("latency"))
    let store = try await FirestoreStore.open(StoreRequest(url: "firestore://\(rest.project)", worker: true, start: .beginning),
                                              environment: ["FIRESTORE_EMULATOR_HOST": emulator.host])
    let bot = try BotRuntime(path: try temporaryBot(TestBot.oneReply).path)
    let worker = Worker(store: store, bots: [bot], options: Worker.Options(), log: Logger(minimum: .error))
    let task = Task { try await worker.run() }
    try await Task.sleep(for: .seconds(1))
    let total = rate * seconds, lanes = 50
    let clock = ContinuousClock(), start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for i in 0..<total {
            try await clock.sleep(until: start + .milliseconds(i * 1000 / rate))
            group.addTask { try await rest.batchWrite(rest.customerWrites(i % lanes, i / lanes, at: Date())) }
        }
        try await group.waitForAll()
    }
    // Each customer message's createTime against its reply's (`usher-{bot}-m{k}-0`).
    func createTimes() async throws -> [String: Date] {
        let answer = try await rest.post(":runQuery", #"{"structuredQuery":{"from":[{"collectionId":"messages","allDescendants":true}]}}"#)
        guard case let .array(items) = answer.kind else { return [:] }
        var out: [String: Date] = [:]
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for item in items {
            guard case let .string(name)? = item["document"]?["name"]?.kind, case let .string(t)? = item["document"]?["createTime"]?.kind else { continue }
            let parts = name.split(separator: "/")
            // Microsecond digits: ISO8601DateFormatter reads three.
            let trimmed = t.count > 24 ? String(t.prefix(23)) + "Z" : t
            out[parts[parts.count - 3] + "/" + parts[parts.count - 1]] = f.date(from: trimmed)
        }
        return out
    }
    var times: [String: Date] = [:]
    for _ in 0..<100 {
        times = try await createTimes()
        if times.count >= 2 * total { break }
        try await Task.sleep(for: .milliseconds(200))
    }
    var latencies: [Double] = []
    for i in 0..<total {
        let c = i % lanes, k = i / lanes
        if let sent = times["c\(c)/m\(k)"], let answered = times["c\(c)/usher-\(bot.id)-m\(k)-0"] { latencies.append(answered.timeIntervalSince(sent) * 1000) }
    }
    worker.requestStop()
    try await task.value
    try await store.close()
    latencies.sort()
    func pct(_ p: Double) -> String { latencies.isEmpty ? "-" : String(format: "%.1f", latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]) }
    print("latency at \(rate) msg/s for \(seconds) s (\(latencies.count) of \(total) answered): p50 \(pct(0.5)) ms, p99 \(pct(0.99)) ms, max \(pct(1.0)) ms")
}
emulator.stop()
