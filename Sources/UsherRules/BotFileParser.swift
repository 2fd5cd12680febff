import UsherDiagnostics
import UsherYAML
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Turns a `bot.yaml` document into a `BotConfig` (DESIGN.md §2), reporting every problem.
/// The keys it accepts are those of the bot-file schema (`JSONSchema.botFile`).
struct BotFileParser {
    static let keys = JSONSchema.botFile.propertyNames
    static let sessionKeys = JSONSchema.botSession.propertyNames
    static let limitKeys = JSONSchema.botLimits.propertyNames
    static let loopGuardKeys = JSONSchema.botLoopGuard.propertyNames
    static let handoffKeys = JSONSchema.botHandoff.propertyNames

    let reader: NodeReader
    let files: RuleSetLoader.Files

    /// What the bot file gave.
    struct Parsed {
        /// The bot; with a mistake in bot.yaml, what could be read of it (its rule files
        /// above all), so that the rule files are still checked in the same run.
        var bot: BotConfig
        /// Whether bot.yaml has no error: the bot may run.
        var valid: Bool
        /// Every schedule bot.yaml names, those with errors too: a rule that uses one of them
        /// is not also told the schedule does not exist.
        var scheduleNames: [String]
    }

    /// Parses the bot file; `nil` when it is not a mapping at all. Rule file patterns that
    /// match nothing are reported here.
    func parse() -> Parsed? {
        let path = reader.file
        guard let root = reader.document.root else { return nil }
        guard let m = reader.mapping(root, "the bot file", allowed: Self.keys) else { return nil }
        var ok = true

        var id = "bot"
        if let node = reader.require(m["bot"], "bot", in: root, "the bot file", example: "bot: support"),
           let s = reader.text(node, "'bot'") {
            if Self.isValidID(s) { id = s } else {
                reader.error("invalid-id", "'\(s)' is not a valid bot id; use lowercase letters, digits and '-', like 'support'", at: node)
                ok = false
            }
        } else { ok = false }

        let name = m["name"].flatMap { reader.text($0, "'name'") } ?? id
        let senderId = m["sender_id"].flatMap { reader.text($0, "'sender_id'") } ?? "bot:\(id)"
        _ = m["description"].flatMap { reader.text($0, "'description'") }

        var timeZone = TimeZone(identifier: "UTC")!
        if let node = m["timezone"], let s = reader.text(node, "'timezone'") {
            if let tz = TimeZone(identifier: s), s.contains("/") || s == "UTC" || s == "GMT" {
                timeZone = tz
            } else {
                reader.error("unknown-timezone", "unknown time zone '\(s)'" + (BotConfig.nearestTimeZone(to: s).map { "; did you mean '\($0)'?" }
                    ?? "; use an IANA name like 'Asia/Shanghai' or 'Europe/Madrid'"), at: node)
                ok = false
            }
        }

        var ruleFiles: [String] = []
        if let node = reader.require(m["rules"], "rules", in: root, "the bot file", example: "rules: [rules.yaml]"),
           let items = reader.texts(node, "'rules'") {
            if items.isEmpty {
                reader.error("missing-rules", "'rules' lists no files; name at least one rule file, like 'rules.yaml'", at: node)
                ok = false
            }
            let dir = (path as NSString).deletingLastPathComponent
            for (pattern, itemNode) in items {
                let matches = expand(pattern, relativeTo: dir)
                if matches.isEmpty {
                    let folder = dir.isEmpty ? "." : dir
                    let message = if pattern.contains(where: { "*?[".contains($0) }) {
                        "no rule file matches '\(pattern)' (relative to \(folder))"
                    } else if files.isDirectory(Self.resolve(pattern, relativeTo: dir)) {
                        "'\(pattern)' is a folder, not a rule file (relative to \(folder)); name the files in it, like '\(pattern.hasSuffix("/") ? String(pattern.dropLast()) : pattern)/*.yaml'"
                    } else {
                        "rule file '\(pattern)' does not exist (paths are relative to the bot file's folder, \(folder))"
                    }
                    reader.error("missing-rule-file", message, at: itemNode)
                    ok = false
                }
                for file in matches where !ruleFiles.contains(file) { ruleFiles.append(file) }
            }
        } else { ok = false }

        var schedules: [Schedule] = []
        if let node = m["schedules"] {
            if let pairs = node.mapping {
                for pair in pairs {
                    guard let schedName = pair.key.scalar else { continue }
                    if let s = ScheduleParser(reader: reader).parse(name: schedName, pair.value) {
                        schedules.append(s)
                    } else { ok = false }
                }
            } else {
                reader.error("wrong-type", "expected 'schedules' as a mapping of schedule names, found \(node.kindName)", at: node)
                ok = false
            }
        }

        var idleReset: TimeInterval?
        if let node = m["session"], let s = reader.mapping(node, "'session'", allowed: Self.sessionKeys) {
            if let n = s["idle_reset"] {
                idleReset = reader.duration(n, "'idle_reset'")
                if idleReset == nil { ok = false }
            }
        }

        // First: the bot's texts per language are checked against its languages.
        let language = parseLanguages(m)
        if language == nil { ok = false }

        var maxReplies: Int?
        var loopGuard: BotConfig.LoopGuard?
        var decisionBudget = BotConfig.defaultDecisionBudget
        if let node = m["limits"], let l = reader.mapping(node, "'limits'", allowed: Self.limitKeys) {
            if let n = l["max_bot_replies"] {
                maxReplies = reader.integer(n, "'max_bot_replies'", in: 1...1_000_000)
                if maxReplies == nil { ok = false }
            }
            if let n = l["loop_guard"], let g = reader.mapping(n, "'loop_guard'", allowed: Self.loopGuardKeys) {
                let replies = reader.require(g["replies"], "replies", in: n, "'loop_guard'", example: "replies: 3")
                    .flatMap { reader.integer($0, "'replies'", in: 1...10_000) }
                let within = reader.require(g["within"], "within", in: n, "'loop_guard'", example: "within: 1m")
                    .flatMap { reader.duration($0, "'within'") }
                var message: LocalizedTemplate?
                if let m = g["message"] {
                    message = TemplateParser(reader: reader, captures: [], context: "the loop guard's message")
                        .localized(m, "'message'", languages: language?.languages)
                    if message == nil { ok = false }
                }
                if let replies, let within { loopGuard = .init(replies: replies, within: within, message: message) } else { ok = false }
            }
            if let n = l["decision_budget"] {
                if let budget = parseDecisionBudget(n) { decisionBudget = budget } else { ok = false }
            }
        }

        var handoff = BotConfig.HandoffDefaults.seed
        if let node = m["handoff"], let h = reader.mapping(node, "'handoff'", allowed: Self.handoffKeys) {
            if let n = h["system_message"] {
                if let t = TemplateParser(reader: reader, captures: [], context: "the handoff message")
                    .localized(n, "'system_message'", languages: language?.languages) {
                    handoff.systemMessage = t
                } else { ok = false }
            }
            if let n = h["queue"], let q = reader.text(n, "'queue'") { handoff.queue = q }
            if let n = h["notify"], let b = reader.bool(n, "'notify'") { handoff.notify = b }
        }

        var channels: [Glob] = []
        if let node = m["channels"] {
            if let items = reader.texts(node, "'channels'") { channels = items.map { Glob($0.0) } } else { ok = false }
        }

        var bot = BotConfig(id: id, name: name, senderId: senderId, timeZone: timeZone, ruleFiles: ruleFiles,
                            schedules: schedules, idleReset: idleReset, maxBotReplies: maxReplies,
                            loopGuard: loopGuard, handoff: handoff, path: path)
        bot.channels = channels
        bot.decisionBudget = decisionBudget
        if let language { (bot.languages, bot.matching, bot.dictionaries) = language }
        let scheduleNames = m["schedules"]?.mapping?.compactMap(\.key.scalar) ?? []
        return Parsed(bot: bot, valid: ok, scheduleNames: scheduleNames)
    }

    /// `decision_budget: 10ms` (or `2s`): a whole number of milliseconds or seconds, within
    /// `BotConfig.decisionBudgetRange`.
    private func parseDecisionBudget(_ node: YAMLNode) -> Duration? {
        guard let text = reader.text(node, "'decision_budget'") else { return nil }
        let range = BotConfig.decisionBudgetRange
        let unit: Duration? = text.hasSuffix("ms") ? .milliseconds(1) : text.hasSuffix("s") ? .seconds(1) : nil
        let digits = text.dropLast(text.hasSuffix("ms") ? 2 : 1)
        guard let unit, !digits.isEmpty, digits.allSatisfy(\.isASCII), let n = Int(digits), n <= 1_000_000 else {
            reader.error("invalid-duration", "'\(text)' is not a time budget for 'decision_budget'; write milliseconds or seconds, like 10ms or 1s", at: node)
            return nil
        }
        let budget = unit * n
        guard range.contains(budget) else {
            reader.error("out-of-range", "'decision_budget' must be between 1ms and 60s, found \(text)", at: node)
            return nil
        }
        return budget
    }

    /// Lowercase letters, digits and '-' (and '_' for rule and list names), starting with a
    /// letter or digit.
    static func isValidID(_ s: String, allowUnderscore: Bool = false) -> Bool {
        guard let f = s.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(f) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(f) else { return false }
        return s.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "-") || (allowUnderscore && $0 == UInt8(ascii: "_"))
        }
    }

    /// Expands a relative path or glob against `dir`, sorted.
    func expand(_ pattern: String, relativeTo dir: String) -> [String] {
        let full = Self.resolve(pattern, relativeTo: dir)
        guard pattern.contains(where: { "*?[".contains($0) }) else {
            return files.isFile(full) ? [full] : []
        }
        return files.glob(full)
    }

    /// A path of bot.yaml, relative to its folder `dir` unless absolute, normalised.
    static func resolve(_ pattern: String, relativeTo dir: String) -> String {
        normalise(pattern.hasPrefix("/") || dir.isEmpty ? pattern : dir + "/" + pattern)
    }

    static func diskGlob(_ pattern: String) -> [String] {
        var g = glob_t()
        defer { globfree(&g) }
        guard glob(pattern, 0, nil, &g) == 0 else { return [] }
        var out: [String] = []
        for i in 0..<Int(g.gl_pathc) {
            if let p = g.gl_pathv[i] { out.append(normalise(String(cString: p))) }
        }
        return out.sorted()
    }

    /// `bots/support/../../rules/x.yaml` → `rules/x.yaml`, keeping relative paths relative.
    static func normalise(_ path: String) -> String {
        var parts: [Substring] = []
        let absolute = path.hasPrefix("/")
        for c in path.split(separator: "/") {
            if c == "." { continue }
            if c == "..", let last = parts.last, last != ".." { parts.removeLast(); continue }
            parts.append(c)
        }
        let joined = parts.joined(separator: "/")
        return absolute ? "/" + joined : (joined.isEmpty ? "." : joined)
    }
}
