// usher-bench — the numbers of BENCHMARKS.md. Run from the repository root:
//
//     swift run -c release usher-bench [--quick]
//
// Prints decisions per second for bots/support, matching time per 75-byte message with 100,
// 1,000 and 10,000 keyword rules plus 20 regexes, the compile time of those rule sets, and the
// decision time of a bot with 500 catastrophic regexes under attack (BudgetBench).
import Foundation
import UsherBenchSupport
import UsherEngine
import UsherRules
import UsherText
import UsherTranscripts

// Rule files are read relative to the repository root, wherever the bench is started from.
_ = FileManager.default.changeCurrentDirectoryPath(
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path)

BenchArguments.check(usage: """
    usher-bench [--quick] [--only support|scale|words|corpus|compile|budget|replay|worker|http]   (from the repository root; BENCHMARKS.md)
      decisions per second for bots/support (its matching on and off), matching time per message
      with 100, 1,000 and 10,000 keyword rules plus 20 regexes, their compile time, the same with
      word forms and typos on against exact (words), what they change on the cucom corpus with a
      sample to judge (corpus, ../shared/data or the repository's 300), decision time p50/p99/max of a
      bot with 500 catastrophic regexes under attack beside bots/support, replay, the worker
      on SQLite and /healthz latency with 1,500 connections held against the HTTP server;
      --quick: fewer iterations; --only: one part (for profiling)
    """, flags: ["--quick"], values: ["--only"])
let quick = CommandLine.arguments.contains("--quick")
/// `--only support` or `--only scale`: run one part (for profiling).
let only: String? = CommandLine.arguments.firstIndex(of: "--only").flatMap {
    CommandLine.arguments.indices.contains($0 + 1) ? CommandLine.arguments[$0 + 1] : nil
}

/// Best of `rounds` runs of `body` over `iterations`, in nanoseconds per iteration.
func measure(iterations: Int, rounds: Int = 5, _ body: (Int) -> Void) -> Double {
    var best = Double.infinity
    for _ in 0..<rounds {
        let start = ContinuousClock.now
        for i in 0..<iterations { body(i) }
        let ns = (ContinuousClock.now - start) / .nanoseconds(1)
        best = min(best, ns / Double(iterations))
    }
    return best
}

func fmt(_ x: Double, _ digits: Int = 0) -> String { String(format: "%.\(digits)f", x) }

/// A deterministic generator, so every run sees the same rules and messages.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

// Realistic 75-byte customer messages (ASCII, as most support traffic is), a few with CJK.
let messages: [String] = [
    "hi, my order 502-2345678-9012345 arrived damaged, can I get a replacement?",
    "I was charged twice for the same item last week, please check it for me!!",
    "where is my parcel? tracking says delivered but nothing here, very upset..",
    "can i talk to a real person please, this bot is not helping me at all ok",
    "The size of the shoes is wrong, I want to exchange them for a bigger pair",
    "hello?? anyone there? i have been waiting for an answer since yesterday!",
    "I want a refund for the headphones, they stopped working after two days.",
    "我的订单还没有到，已经等了一个星期了，请帮我查一下物流情况好吗谢谢",
]
precondition(messages.allSatisfy { $0.utf8.count >= 70 })

// MARK: 1. Decisions per second, bots/support

func supportDecisions() {
    let result = RuleSetLoader.loadBot(at: "bots/support")
    guard let rs = result.ruleSet else {
        print("bots/support did not load:")
        for d in result.diagnostics { print("  \(d.headline)") }
        exit(1)
    }
    decide(rs, "bots/support")
    // The same bot with bot.yaml's word forms and typos off, in the same run.
    if let exact = CorpusBench.load(matching: false) { decide(exact, "bots/support, matching off") }
}

func decide(_ rs: RuleSet, _ name: String) {
    let start = Date(timeIntervalSince1970: 1_764_468_000)   // 2025-11-30 10:00 +08:00, a Sunday
    // A conversation per message, each starting fresh, so every decision evaluates rules.
    let conversations = 1000
    var states = (0..<conversations).map { ConversationState(conversationID: "c-\($0)") }
    let ids = (0..<conversations).map { "m-\($0)" }
    let n = quick ? 100_000 : 1_000_000
    var replies = 0
    let ns = measure(iterations: n, rounds: quick ? 2 : 5) { i in
        let c = i % conversations
        let m = Message(id: ids[c], conversationID: states[c].conversationID, from: .customer,
                        text: messages[i % messages.count], at: start.addingTimeInterval(Double(i)))
        let d = Engine.decide(rs, states[c], m, now: m.at)
        replies &+= d.effects.count
        // Keep conversations in the bot's hands so the benchmark does not measure silence.
        states[c] = d.state.owner == .bot ? d.state : ConversationState(conversationID: states[c].conversationID)
    }
    print("decide, \(name) (\(rs.rules.count) rules): \(fmt(ns)) ns/decision = \(fmt(1e9 / ns / 1000)) k decisions/s on one core   [target ≥ 300 k/s]")
    if replies == 0 { print("  (no effects? check the bot)") }
}

// MARK: 2. Matching and compile time at scale

func words(_ count: Int, rng: inout SplitMix64) -> [String] {
    let letters = Array("abcdefghijklmnopqrstuvwxyz")
    var seen = Set<String>()
    var out: [String] = []
    while out.count < count {
        let len = Int.random(in: 5...9, using: &rng)
        let w = String((0..<len).map { _ in letters[Int.random(in: 0..<26, using: &rng)] })
        if seen.insert(w).inserted { out.append(w) }
    }
    return out
}

func syntheticBot(rules: Int, botLines: String = "") -> [String: String] {
    var rng = SplitMix64(state: 42)
    let vocab = words(rules * 2, rng: &rng)
    var y = "version: 1\nrules:\n"
    let regexes = [
        #"(?<order>\b\d{3}-\d{7}-\d{7}\b)"#, #"\bcharge\s?back\b"#, #"\brefund(ed|s)?\b"#, #"(?i)\bcancel(led)?\b"#,
        #"\b[A-Z]{2}\d{9}[A-Z]{2}\b"#, #"(?<email>[\w.+-]+@[\w-]+\.[\w.]+)"#, #"\btrack(ing)?\s+number\b"#,
        #"\bwhere\s+is\s+my\b"#, #"(?i)\bnot\s+working\b"#, #"\bdamaged?\b"#, #"\binvoice\s*#?\d+\b"#,
        #"(?i)\bpassword\b"#, #"\bcoupon\s+code\b"#, #"\b\d+\s?(kg|lbs)\b"#, #"(?i)\bunsubscribe\b"#,
        #"\bwrong\s+(size|item|colou?r)\b"#, #"\bexchange\b"#, #"(?i)\bwarranty\b"#, #"\blate\s+delivery\b"#,
        #"\bcharged\s+twice\b"#,
    ]
    for (i, r) in regexes.enumerated() {
        y += "  - id: regex-\(i)\n    when: {regex: '\(r)'}\n    then: [reply: \"regex \(i)\"]\n"
    }
    for i in 0..<rules {
        y += "  - id: kw-\(i)\n    when: {keywords: [\(vocab[2 * i]), \"\(vocab[2 * i + 1]) \(vocab[(2 * i + 7) % vocab.count])\"]}\n    then: [reply: \"keyword \(i)\"]\n"
    }
    let bot = "bot: bench\ntimezone: UTC\nrules: [rules.yaml]\n" + botLines
    return ["bench/bot.yaml": bot, "bench/rules.yaml": y]
}

func scale() {
    var baseline: Double?
    for n in [100, 1_000, 10_000] {
        let files = syntheticBot(rules: n)
        var rs: RuleSet?
        let compileMs = measure(iterations: 1, rounds: quick ? 1 : 3) { _ in
            rs = RuleSetLoader.loadBot(botPath: "bench/bot.yaml", files: files).ruleSet
        } / 1e6
        guard let rs else { print("synthetic bot with \(n) rules did not load"); exit(1) }
        var sink = 0
        let matchNs = measure(iterations: quick ? 20_000 : 200_000) { i in
            sink &+= Engine.candidateRules(rs, text: messages[i % messages.count]).count
        }
        var state = ConversationState(conversationID: "bench")
        state.session = 1
        let at = Date(timeIntervalSince1970: 1_764_468_000)
        state.sessionStartedAt = at
        let decideNs = measure(iterations: quick ? 20_000 : 200_000) { i in
            let m = Message(id: "m", conversationID: "bench", from: .customer, text: messages[i % messages.count], at: at)
            sink &+= Engine.decide(rs, state, m, now: at).effects.count
        }
        if baseline == nil { baseline = decideNs }
        print("\(String(n).padding(toLength: 6, withPad: " ", startingAt: 0)) keyword rules + 20 regexes: match \(fmt(matchNs)) ns/message, full decision \(fmt(decideNs)) ns/message (\(fmt(decideNs / baseline!, 2))× the 100-rule time), compile \(fmt(compileMs, 1)) ms   [targets ≤ 1000 ns, ≤ 3×, ≤ 200 ms]")
        if sink == -1 { print(sink) }
    }
}

// MARK: 3. Replay of the cucom data set

/// Replays all 5,000 conversations of ../shared/data/cucom-ecommerce-5000.jsonl.gz with
/// bots/support: gunzip, JSON parsing, decisions and the report written to /dev/null, timed
/// whole, for each format and both agent modes; then the process's peak memory.
func replay() {
    let path = "../shared/data/cucom-ecommerce-5000.jsonl.gz"
    guard FileManager.default.fileExists(atPath: path) else {
        print("replay: skipped, \(path) is not there (it sits beside the repository in the development setup)")
        return
    }
    guard let rs = RuleSetLoader.loadBot(at: "bots/support").ruleSet else { print("bots/support did not load"); exit(1) }
    func maxRSS() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss   // KiB on Linux
    }
    let before = maxRSS()
    let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    let rounds = quick ? 1 : 5
    print("replay: \(path) (\(fmt(Double(size) / 1_048_576, 1)) MiB gzip), bots/support, report to /dev/null; best of \(rounds)")
    // Reading alone: gunzip, split lines, parse JSON, build messages.
    var records = 0
    let readMs = measure(iterations: 1, rounds: rounds) { _ in
        records = 0
        guard let reader = try? TranscriptReader(path: path) else { return }
        while let r = try? reader.next() { if case .conversation = r { records += 1 } }
    } / 1e6
    print("  read only (gunzip + JSON + messages): \(fmt(readMs, 1)) ms for \(records) conversations")
    for agents in [ReplayOptions.Agents.takeover, .ignore] {
        for format in ["text", "text --summary-only", "json", "html"] {
            var result: ReplayResult?
            let ms = measure(iterations: 1, rounds: rounds) { _ in
                let out = try! ReportOutput(path: "/dev/null")
                let runner = ReplayRunner(bot: rs, botPath: "bots/support", transcripts: [path], options: ReplayOptions(agents: agents))
                switch format {
                case "json":
                    var w = ReportJSON(out)
                    result = try? runner.run([path], into: &w)
                case "html":
                    var w = try! ReportHTML(out)
                    result = try? runner.run([path], into: &w)
                default:
                    var w = ReportText(out, conversations: format == "text")
                    result = try? runner.run([path], into: &w)
                }
            } / 1e6
            guard let r = result else { print("  replay failed"); exit(1) }
            let decided = r.summary.decided + r.summary.silentAgent + r.summary.silentWaiting
            print("  replay \(agents == .ignore ? "--ignore-agents" : "(agents take over)") --format \(format): \(fmt(ms, 1)) ms, \(r.summary.conversations) conversations, \(decided) customer messages decided, \(r.summary.replies) replies   [target well under 1000 ms]")
        }
    }
    let after = maxRSS()
    print("  peak memory (ru_maxrss): \(fmt(Double(after) / 1024, 1)) MiB for the process, \(fmt(Double(before) / 1024, 1)) MiB before the replays")
}

print("usher-bench (\(quick ? "quick" : "full") run, release build expected; \(ProcessInfo.processInfo.activeProcessorCount) cores)")
if only == nil || only == "support" { supportDecisions() }
if only == nil || only == "scale" { scale() }
if only == "compile" {
    let files = syntheticBot(rules: 10_000)
    for _ in 0..<3 { _ = RuleSetLoader.loadBot(botPath: "bench/bot.yaml", files: files) }
}
if only == nil || only == "words" { WordsBench.run(quick: quick) }
if only == nil || only == "corpus" { CorpusBench.run(list: only == "corpus" ? 50 : 0) }
if only == nil || only == "budget" { BudgetBench.run(quick: quick) }
if only == nil || only == "replay" { replay() }
if only == nil || only == "http" {
    print("HTTP server (/healthz, idle and with 1,500 connections held)")
    HTTPBench.run(quick: quick)
}
if only == nil || only == "worker" {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { try await WorkerBench.run(quick: quick) } catch { print("worker bench failed: \(error)") }
        done.signal()
    }
    done.wait()
}
