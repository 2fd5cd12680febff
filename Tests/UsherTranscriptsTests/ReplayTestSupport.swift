import Foundation
import Testing
import UsherRules
import UsherTranscripts

/// The bot replay tests run: the seed's opening and threshold, a keyword handoff, a refund
/// reply, and a rule no transcript triggers. Inline, so that edits to bots/support do not move
/// the exact numbers these tests expect.
let replayBotFiles: [String: String] = [
    "r/bot.yaml": """
    bot: r
    name: R
    timezone: UTC
    rules: [rules.yaml]
    session: {idle_reset: 24h}
    handoff: {system_message: "Connecting you to an agent.", queue: general, notify: false}

    """,
    "r/rules.yaml": """
    version: 1
    rules:
      - id: wants-human
        priority: 100
        when: {keywords: [human]}
        then: [handoff: {reason: asked-for-human}]
      - id: threshold
        priority: 50
        when: {customer_messages: {at_least: 4}}
        then: [handoff: {reason: threshold}]
      - id: refund
        priority: 40
        when: {keywords: [refund]}
        then: [reply: "Refund? What's your order number?"]
      - id: never
        priority: 30
        when: {keywords: [xyzzy]}
        then: [reply: "Nothing happens."]
      - id: opening
        when: {customer_messages: {at_most: 3}}
        then: [reply: {sequence: ["Hi!", "Thanks!", "One moment..."]}]

    """,
]

/// The same bot with the refund rule gone, a fallback, and the handoff one message earlier.
let replayOtherBotFiles: [String: String] = [
    "o/bot.yaml": replayBotFiles["r/bot.yaml"]!.replacingOccurrences(of: "bot: r\nname: R", with: "bot: o\nname: O"),
    "o/rules.yaml": """
    version: 1
    rules:
      - id: wants-human
        priority: 100
        when: {keywords: [human]}
        then: [handoff: {reason: asked-for-human}]
      - id: threshold
        priority: 50
        when: {customer_messages: {at_least: 3}}
        then: [handoff: {reason: threshold}]
      - id: opening
        when: {customer_messages: {at_most: 2}, keywords: [hi, hello]}
        then: [reply: "Hello!"]
    fallback:
      - reply: "Sorry?"

    """,
]

func replayBot(_ files: [String: String] = replayBotFiles, sourceLocation: SourceLocation = #_sourceLocation) throws -> RuleSet {
    let path = files.keys.first { $0.hasSuffix("bot.yaml") }!
    let result = RuleSetLoader.loadBot(botPath: path, files: files)
    return try #require(result.ruleSet, "bot loads: \(result.diagnostics.map(\.headline))", sourceLocation: sourceLocation)
}

/// A report writer that keeps everything, for assertions.
struct CollectingWriter: ReplayReportWriter {
    final class Box {
        var header: ReplayHeader?
        var conversations: [ReplayConversation] = []
        var result: ReplayResult?
    }
    let box = Box()
    mutating func begin(_ header: ReplayHeader) { box.header = header }
    mutating func add(_ conversation: ReplayConversation) { box.conversations.append(conversation) }
    mutating func end(_ result: ReplayResult) { box.result = result }
}

/// A scratch folder, removed by the caller.
func replayScratch() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-replay-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

/// Writes `bytes` to `name` in `dir` and returns the path.
@discardableResult
func replayWrite(_ bytes: some Sequence<UInt8>, _ name: String, in dir: URL) throws -> String {
    let url = dir.appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url.path
}

/// Replays `transcript` (the text of one file) and returns what the writer saw.
func replayText(_ transcript: String, name: String = "t.jsonl", bot: RuleSet? = nil, against: RuleSet? = nil,
                options: ReplayOptions = .init(), sourceLocation: SourceLocation = #_sourceLocation) throws -> (ReplayResult, [ReplayConversation]) {
    let dir = try replayScratch()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = try replayWrite(Array(transcript.utf8), name, in: dir)
    let runner = ReplayRunner(bot: try bot ?? replayBot(sourceLocation: sourceLocation), against: against, transcripts: [path], options: options)
    var w = CollectingWriter()
    let result = try runner.run([path], into: &w)
    return (result, w.box.conversations)
}

/// A minimal gzip encoder for fixtures: deflate "stored" blocks (no compression), a correct
/// header, CRC-32 and length — what any gzip reader must accept. Real compressed data comes from
/// bots/support/transcripts/cucom-300.jsonl.gz.
enum GzipFixture {
    static func stored(_ data: [UInt8], blockSize: Int = 65_535) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        var i = 0
        repeat {
            let n = min(blockSize, data.count - i)
            let final: UInt8 = i + n >= data.count ? 1 : 0
            out.append(final)
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[i..<(i + n)]
            i += n
        } while i < data.count
        out += le32(crc32(data)) + le32(UInt32(truncatingIfNeeded: data.count))
        return out
    }

    static func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for n in 0..<256 {
            var c = UInt32(n)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
            table[n] = c
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for b in data { crc = table[Int((crc ^ UInt32(b)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// The repository, for the transcripts checked in under bots/.
let replayRepoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The report `make` writes of a replay of `transcript` (JSON lines) through the bot of
/// `files` (its folder `botPath`).
func replayReport(_ files: [String: String], botPath: String, transcript: String,
                  _ make: (ReportOutput) throws -> any ReplayReportWriter) throws -> String {
    let dir = try replayScratch()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = try replayWrite(Array(transcript.utf8), "t.jsonl", in: dir)
    let runner = ReplayRunner(bot: try replayBot(files), botPath: botPath, transcripts: ["t.jsonl"])
    let out = ReportOutput()
    var writer = try make(out)
    _ = try runner.run([path], into: &writer)
    out.flush()
    return out.text
}
