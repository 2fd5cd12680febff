import Foundation
import UsherEngine
import UsherRules
import UsherTranscripts

/// `--only corpus`: what word forms and typos change on real customer messages. Every customer
/// message of the cucom corpus is decided by `bots/support` as the first message of a fresh
/// conversation, once with the bot's `matching` off and once on (`word_forms` and `typos`,
/// `language: en`), and the messages where a keyword rule fires only with matching on are
/// counted and listed: the rule, how its keyword matched (explain's words) and the message.
/// A keyword rule is any rule but the seed's catch-alls (`opening*`, `threshold*`), which
/// answer every message anyway. BENCHMARKS.md has the counts, docs/word-matching.md the sample
/// judged by hand.
///
/// Reads all 5,000 conversations from ../shared/data when that folder is there (the development
/// setup), else the first 300, which the repository carries (bots/support/transcripts).
enum CorpusBench {
    static let catchAlls: Set<String> = ["opening", "opening-zh", "threshold", "threshold-zh"]

    static func run(list: Int) {
        let shared = "../shared/data/cucom-ecommerce-5000.jsonl.gz"
        let path = FileManager.default.fileExists(atPath: shared) ? shared : "bots/support/transcripts/cucom-300.jsonl.gz"
        guard let on = load(matching: true), let off = load(matching: false) else { exit(1) }
        var texts: [String] = []
        do {
            let reader = try TranscriptReader(path: path)
            while let record = try reader.next() {
                guard case let .conversation(c) = record else { continue }
                texts += c.messages.filter { $0.message.from == .customer }.map(\.message.text)
            }
        } catch {
            print("corpus: cannot read \(path): \(error)")
            exit(1)
        }
        let at = Date(timeIntervalSince1970: 1_764_468_000)   // 2025-11-30 10:00 +08:00, a Sunday
        var firesOff = 0, firesOn = 0
        var gained: [(rule: String, how: String, text: String)] = []
        var lost = 0
        for (i, text) in texts.enumerated() {
            let m = Message(id: "m\(i)", conversationID: "c\(i)", from: .customer, text: text, at: at)
            let state = ConversationState(conversationID: "c\(i)")
            let a = Set(Engine.decide(off, state, m, now: at).firedRules).subtracting(catchAlls)
            let b = Engine.decide(on, state, m, now: at, options: .init(trace: true))
            let bRules = Set(b.firedRules).subtracting(catchAlls)
            if !a.isEmpty { firesOff += 1 }
            if !bRules.isEmpty { firesOn += 1 }
            if !a.subtracting(bRules).isEmpty { lost += 1 }
            for rule in bRules.subtracting(a).sorted() {
                let how = b.trace?.first { $0.rule == rule }?.matched ?? "(no form or typo: another rule stopped firing)"
                gained.append((rule, how, text))
            }
        }
        print("corpus: \(path), \(texts.count) customer messages, each the first of a fresh conversation of bots/support")
        print("  a keyword rule fires: \(firesOff) with matching off, \(firesOn) with word forms and typos on (+\(firesOn - firesOff)); \(gained.count) new rule matches, \(lost) messages lost one")
        var byRule: [String: Int] = [:]
        for g in gained { byRule[g.rule, default: 0] += 1 }
        print("  new matches by rule: " + byRule.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        // A fixed sample, spread over the whole list: every k-th new match.
        guard list > 0, !gained.isEmpty else { return }
        let step = max(1, gained.count / list)
        print("  a sample of \(min(list, gained.count)): every \(step) of the new matches")
        for (n, g) in stride(from: 0, to: gained.count, by: step).prefix(list).map({ gained[$0] }).enumerated() {
            let short = g.text.count > 140 ? String(g.text.prefix(139)) + "…" : g.text
            print("  \(n + 1)\t\(g.rule)\t\(g.how)\t\(short.replacingOccurrences(of: "\n", with: " "))")
        }
    }

    /// bots/support as it is, with `matching` on or off whatever bot.yaml says.
    static func load(matching: Bool) -> RuleSet? {
        var files: [String: String] = [:]
        for name in ["bots/support/bot.yaml", "bots/support/rules.yaml", "rules/handoff.yaml", "rules/thanks.yaml"] {
            files[name] = try? String(contentsOfFile: name, encoding: .utf8)
        }
        guard var bot = files["bots/support/bot.yaml"] else { print("corpus: bots/support/bot.yaml not found"); return nil }
        bot = bot.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("matching:") && !$0.hasPrefix("language:") }.joined(separator: "\n")
        bot += "\nlanguage: en\n" + (matching ? "matching: {word_forms: true, typos: true}\n" : "")
        files["bots/support/bot.yaml"] = bot
        let result = RuleSetLoader.loadBot(botPath: "bots/support/bot.yaml", files: files)
        if result.ruleSet == nil { for d in result.diagnostics { print("corpus: \(d.headline)") } }
        return result.ruleSet
    }
}
