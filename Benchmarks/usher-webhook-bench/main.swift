// usher-webhook-bench — the webhook store's intake against a bare loop of the same work, and its
// latencies (BENCHMARKS.md, "The webhook").
import Foundation
import UsherBenchSupport
import UsherHTTP
import UsherHTTPTestServer
import UsherRuntime
import UsherSQLite
import UsherStore
import UsherTestSupport
import UsherWebhook

let usage = """
        swift build -c release --product usher-webhook-bench
        .build/release/usher-webhook-bench [--messages N] [--clients C] [--rounds R] [--rate 1000]
                                           [--seconds 10] [--e2e-rate 200] [--only acks|latency|e2e]

    acks: N messages (default 4,000), one per POST, from C clients at once (default 16, each on a
    kept-alive connection), acknowledged by the webhook store (signature checked, JSON read,
    committed to the state file, then 202) against a bare loop of the same receive and commit —
    the same libmicrohttpd server, the same SQLite store's append on its thread, 202 after it —
    with no signature, no JSON and no duplicate check. R rounds (default 3), alternating; the
    summary gives each side's median and the ratio.
    latency: --rate messages a second (default 1,000) offered for --seconds (default 10), each
    sent at its time whatever the answers before it; from the send to the 202, p50 and p99,
    with the load average beside them; then the bare loop's at the same rate (unsigned), what
    the machine gives a server that commits before it answers at that moment.
    e2e: --e2e-rate messages a second (default 200) for --seconds into 200 conversations, with a
    worker (one reply each) and a receiver on loopback: from the POST to the reply's call at the
    receiver, p50 and p99.
    """
BenchArguments.check(usage: usage, flags: [], values: ["--messages", "--clients", "--rounds", "--rate", "--seconds", "--e2e-rate", "--only"])
func value(_ name: String, _ fallback: Int) -> Int {
    let a = CommandLine.arguments
    return a.firstIndex(of: name).flatMap { Int(a[$0 + 1]) } ?? fallback
}
let messages = value("--messages", 4_000), clients = value("--clients", 16), rounds = value("--rounds", 3)
let rate = value("--rate", 1_000), seconds = value("--seconds", 10), e2eRate = value("--e2e-rate", 200)
let only = CommandLine.arguments.firstIndex(of: "--only").map { CommandLine.arguments[$0 + 1] }
let signer = WebhookSigner(secret: Array("bench-secret".utf8))

func temporaryFile(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("usher-webhook-bench-\(name)-\(UUID().uuidString).db").path
}

func loadAverage() -> String {
    var load = [Double](repeating: 0, count: 3)
    getloadavg(&load, 3)
    return String(format: "%.2f", load[0])
}

func quantile(_ sorted: [Double], _ q: Double) -> Double {
    sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.up)) - 1)]
}

func ms(_ v: Double) -> String { String(format: "%.2f ms", v * 1000) }

/// A signed POST of one message.
func post(_ client: HTTPClient, _ address: String, _ body: [UInt8], signed: Bool = true) async throws -> Int {
    var request = HTTPRequest(method: "POST", url: "http://\(address)/v1/messages", headers: [("Content-Type", "application/json")], body: body)
    if signed { request.headers += signer.headers(body: body, at: Date()) }
    return try await client.send(request).status
}

func body(_ i: Int, conversations: Int = 200, tag: String) -> [UInt8] {
    Array(#"{"conversation":"c\#(i % conversations)","id":"\#(tag)-\#(i)","text":"where is my order 4417?"}"#.utf8)
}

/// The webhook store under test, listening on a free port, calling a receiver that takes everything.
func webhook(_ receiver: LoopbackHTTPServer) async throws -> WebhookStore {
    var options = WebhookStore.Options(callbackURL: receiver.baseURL + "/actions", listen: "127.0.0.1:0")
    options.limits.connectionsPerAddress = 1_024
    return try await WebhookStore(database: try await SQLiteStore(path: temporaryFile("durable")), door: MessagesAPI(signer: signer),
                                  options: options)
}

/// Messages per second acknowledged at `address`: `messages` POSTs from `clients` at once.
func acksPerSecond(_ address: String, signed: Bool, tag: String) async throws -> Double {
    let client = HTTPClient(connections: clients, timeout: .seconds(30))
    defer { client.close() }
    let next = Locked(0)
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<clients {
            group.addTask {
                while true {
                    let i = next.withLock { n in defer { n += 1 }; return n }
                    if i >= messages { return }
                    let status = try await post(client, address, body(i, tag: tag), signed: signed)
                    precondition(status == 202, "status \(status)")
                }
            }
        }
        try await group.waitForAll()
    }
    return Double(messages) / ((ContinuousClock.now - start) / .seconds(1))
}

// MARK: - acks

/// The ceiling: libmicrohttpd receives, the store appends and commits, 202 — no signature, no
/// JSON, no duplicate check, no intake queue.
struct BareLoop {
    let database: SQLiteStore
    let server: HTTPServer

    init() async throws {
        let database = try await SQLiteStore(path: temporaryFile("bare"))
        let count = Locked(0)
        server = try HTTPServer(address: "127.0.0.1:0", limits: .init(connectionsPerAddress: 1_024), log: Logger(sink: { _ in })) {
            _, responder in
            let n = count.withLock { c in defer { c += 1 }; return c }
            Task(executorPreference: database.taskExecutor) {
                _ = try? await database.append(NewMessage(id: "bare-\(n)", conversationID: "c\(n % 200)", from: .customer,
                                                          text: "where is my order 4417?"))
                responder.respond(.init(status: 202, body: "{}"))
            }
        }
        self.database = database
    }

    func close() async throws {
        server.close()
        try await database.close()
    }
}

func acks() async throws {
    print("acks: \(messages) messages, one per POST, \(clients) clients at once; \(rounds) rounds, alternating")
    let receiver = try LoopbackHTTPServer { _ in .json("{}") }
    defer { receiver.close() }
    var durable: [Double] = [], bare: [Double] = []
    for round in 1...rounds {
        for side in round % 2 == 1 ? ["durable", "bare"] : ["bare", "durable"] {
            if side == "durable" {
                let store = try await webhook(receiver)
                let rate = try await acksPerSecond(store.listenAddress!, signed: true, tag: "r\(round)")
                try await store.close()
                durable.append(rate)
            } else {
                let loop = try await BareLoop()
                let rate = try await acksPerSecond(loop.server.address, signed: false, tag: "r\(round)")
                try await loop.close()
                bare.append(rate)
            }
            print("  round \(round) \(side): \(Int(side == "durable" ? durable.last! : bare.last!)) acks/s   (load \(loadAverage()))")
        }
    }
    let d = durable.sorted()[durable.count / 2], b = bare.sorted()[bare.count / 2]
    print("  median: durable \(Int(d)) acks/s, bare loop \(Int(b)) acks/s: \(String(format: "%.2f", d / b))×   [goal ≥ 0.8×]")
}

// MARK: - latency at an offered rate

/// Sends `rate` POSTs a second for `seconds` to `address`, each at its time (an open loop); the
/// time from each send to its answer, sorted.
func offered(_ address: String, rate: Int, seconds: Int, connections: Int, tag: String, signed: Bool = true,
             sent: (@Sendable (Int, ContinuousClock.Instant) -> Void)? = nil) async throws -> [Double] {
    let client = HTTPClient(connections: connections, timeout: .seconds(30))
    defer { client.close() }
    let total = rate * seconds
    let latencies = Locked([Double]())
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for i in 0..<total {
            let due = start + .microseconds(Int64(i) * 1_000_000 / Int64(rate))
            let now = ContinuousClock.now
            if due > now { try await Task.sleep(for: due - now) }
            group.addTask {
                let t0 = ContinuousClock.now
                sent?(i, t0)
                let status = try await post(client, address, body(i, tag: tag), signed: signed)
                precondition(status == 202, "status \(status)")
                latencies.withLock { $0.append((ContinuousClock.now - t0) / .seconds(1)) }
            }
        }
        try await group.waitForAll()
    }
    return latencies.withLock { $0 }.sorted()
}

/// The durable ack's latency at the offered rate, and the bare loop's at the same rate right
/// after it: what the machine gives any server that commits before it answers, at that moment.
func latency() async throws {
    let receiver = try LoopbackHTTPServer { _ in .json("{}") }
    defer { receiver.close() }
    let store = try await webhook(receiver)
    let l = try await offered(store.listenAddress!, rate: rate, seconds: seconds, connections: 64, tag: "lat")
    try await store.close()
    func summary(_ l: [Double]) -> String { "p50 \(ms(quantile(l, 0.5))), p99 \(ms(quantile(l, 0.99))), max \(ms(l.last ?? .nan))" }
    print("latency: \(rate) messages/s offered for \(seconds) s, one per POST: ack \(summary(l))   [goal p99 ≤ 5 ms]   (load \(loadAverage()))")
    let loop = try await BareLoop()
    let b = try await offered(loop.server.address, rate: rate, seconds: seconds, connections: 64, tag: "lat-bare", signed: false)
    try await loop.close()
    print("  bare loop at the same rate, right after: \(summary(b))   (load \(loadAverage()))")
}

// MARK: - end to end

func endToEnd() async throws {
    let sentAt = Locked([Int: ContinuousClock.Instant]())
    let replies = Locked([Double]())
    let receiver = try LoopbackHTTPServer { request in
        let text = String(decoding: request.body, as: UTF8.self)
        // The reply's key is BOT:MESSAGE-ID:0; the message ids are e2e-N.
        if text.contains(#""type":"reply""#), let r = text.range(of: #":e2e-"#) {
            let n = Int(text[r.upperBound...].prefix { $0.isNumber }) ?? -1
            if let t0 = sentAt.withLock({ $0[n] }) { replies.withLock { $0.append((ContinuousClock.now - t0) / .seconds(1)) } }
        }
        return .json("{}")
    }
    defer { receiver.close() }
    let store = try await webhook(receiver)
    let (dir, bot) = try TestBot.make(prefix: "usher-webhook-bench", rules: TestBot.oneReply)
    defer { try? FileManager.default.removeItem(at: dir) }
    var options = Worker.Options()
    options.idleWait = .milliseconds(5)
    let worker = Worker(store: store, bots: [bot], options: options, log: Logger(minimum: .error))
    store.serve(worker)
    let running = Task { try await worker.run() }
    _ = try await offered(store.listenAddress!, rate: e2eRate, seconds: seconds, connections: 16, tag: "e2e") { i, t in
        sentAt.withLock { $0[i] = t }
    }
    let expected = e2eRate * seconds
    let deadline = ContinuousClock.now + .seconds(60)
    while replies.withLock({ $0.count }) < expected && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
    worker.requestStop()
    try await running.value
    try await store.close()
    let l = replies.withLock { $0 }.sorted()
    print("end to end: \(e2eRate) messages/s for \(seconds) s into 200 conversations, one reply each: \(l.count) of \(expected) replies; "
          + "POST to the reply's call p50 \(ms(quantile(l, 0.5))), p99 \(ms(quantile(l, 0.99)))   (load \(loadAverage()))")
}

print("usher-webhook-bench (release build expected; \(ProcessInfo.processInfo.activeProcessorCount) cores)")
if only == nil || only == "acks" { try await acks() }
if only == nil || only == "latency" { try await latency() }
if only == nil || only == "e2e" { try await endToEnd() }
