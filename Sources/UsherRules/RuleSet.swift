public import UsherDiagnostics
public import UsherText

/// A bot's whole, validated rule set: immutable, shareable, swapped atomically on reload.
/// A class, so that handing it around the hot path costs one reference count, not one per field.
public final class RuleSet: Sendable {
    public let bot: BotConfig
    /// Rules in evaluation order: priority descending, then declaration order.
    public let rules: [Rule]
    /// Actions when no rule fired; `nil` when no file sets `fallback`.
    public let fallback: [Action]?
    public let fallbackLocation: SourceLocation?
    /// Every keyword of every rule, in one index.
    public let keywords: KeywordIndex
    /// Every regex of every rule.
    public let patterns: [Pattern]
    /// Where each pattern is written, for reports.
    public let patternLocations: [SourceLocation]
    /// Literal prefilter over `patterns`: literal id → pattern ids.
    public let literals: LiteralIndex
    public let literalToPatterns: [[Int]]
    /// Patterns without a literal prefilter: always run when a rule needs them.
    public let unfilteredPatterns: [Int]
    /// Candidate selection: rules (indices into `rules`) that can only match when one of these
    /// keywords or patterns matches; every other rule is always evaluated.
    public let rulesByKeyword: [[Int]]
    public let rulesByPattern: [[Int]]
    public let alwaysEvaluated: [Int]
    /// A short hash of every loaded file's bytes: decisions are tagged with it.
    public let version: String
    /// The text of every loaded file, for diagnostics.
    public let sources: [SourceText]
    /// Whether a reply or a notice is written per language (a rule's, the fallback's, or
    /// bot.yaml's handoff and loop-guard notices): then the engine tells the language of each
    /// customer message among the bot's, and the conversation remembers it.
    public let speaksPerLanguage: Bool

    public init(bot: BotConfig, rules: [Rule], fallback: [Action]?, fallbackLocation: SourceLocation?,
                keywords: KeywordIndex, patterns: [Pattern], patternLocations: [SourceLocation],
                version: String, sources: [SourceText]) {
        self.bot = bot
        let ordered = rules.sorted {
            $0.priority != $1.priority ? $0.priority > $1.priority : $0.declarationOrder < $1.declarationOrder
        }
        self.rules = ordered
        self.fallback = fallback
        self.fallbackLocation = fallbackLocation
        self.keywords = keywords
        self.patterns = patterns
        self.patternLocations = patternLocations
        self.version = version
        self.sources = sources
        self.speaksPerLanguage = Self.speaksPerLanguage(bot: bot, rules: rules, fallback: fallback)

        var literalTexts: [String] = []
        var literalIDs: [String: Int] = [:]
        var literalToPatterns: [[Int]] = []
        var unfiltered: [Int] = []
        for (p, pattern) in patterns.enumerated() {
            guard let lits = pattern.requiredLiterals, !lits.isEmpty else { unfiltered.append(p); continue }
            for lit in lits {
                // LiteralIndex ignores ASCII case; non-ASCII letters must stay as written.
                let key = String(decoding: lit.utf8.map { (65...90).contains($0) ? $0 + 32 : $0 }, as: UTF8.self)
                let id = literalIDs[key] ?? {
                    literalTexts.append(key)
                    literalToPatterns.append([])
                    literalIDs[key] = literalTexts.count - 1
                    return literalTexts.count - 1
                }()
                if literalToPatterns[id].last != p { literalToPatterns[id].append(p) }
            }
        }
        self.literals = LiteralIndex(literals: literalTexts)
        self.literalToPatterns = literalToPatterns
        self.unfilteredPatterns = unfiltered

        var byKeyword = [[Int]](repeating: [], count: keywords.count)
        var byPattern = [[Int]](repeating: [], count: patterns.count)
        var always: [Int] = []
        for (i, rule) in ordered.enumerated() {
            guard let when = rule.when, let triggers = Self.requiredTriggers(when) else {
                always.append(i)
                continue
            }
            for k in triggers.keywords { byKeyword[k].append(i) }
            for p in triggers.patterns { byPattern[p].append(i) }
        }
        self.rulesByKeyword = byKeyword
        self.rulesByPattern = byPattern
        self.alwaysEvaluated = always
    }

    /// Looks a rule up by id.
    public func rule(id: String) -> Rule? { rules.first { $0.id == id } }

    /// Keywords or patterns of which at least one must match for `condition` to hold; `nil` when
    /// the condition can hold without any text match.
    static func requiredTriggers(_ condition: Condition) -> (keywords: [Int], patterns: [Int])? {
        switch condition {
        case let .keywords(any, all, _):
            if !all.isEmpty { return ([all[0]], []) }
            return any.isEmpty ? nil : (any, [])
        case let .regex(ids):
            return ids.isEmpty ? nil : ([], ids)
        case let .all(parts):
            // Any one required conjunct is enough; take the narrowest.
            return parts.compactMap(requiredTriggers).min {
                $0.keywords.count + $0.patterns.count < $1.keywords.count + $1.patterns.count
            }
        case let .any(parts):
            var k: [Int] = [], p: [Int] = []
            for part in parts {
                guard let t = requiredTriggers(part) else { return nil }
                k += t.keywords
                p += t.patterns
            }
            return parts.isEmpty ? nil : (k, p)
        default:
            return nil
        }
    }
}

extension RuleSet {
    /// Whether a reply or a notice of the bot is written per language (`speaksPerLanguage`).
    static func speaksPerLanguage(bot: BotConfig, rules: [Rule], fallback: [Action]?) -> Bool {
        func perLanguage(_ text: LocalizedTemplate?) -> Bool { if case .languages? = text { true } else { false } }
        if perLanguage(bot.handoff.systemMessage) || perLanguage(bot.loopGuard?.message) { return true }
        return (rules.flatMap(\.actions) + (fallback ?? [])).contains {
            switch $0 {
            case let .reply(reply): if case .languages = reply.form { true } else { false }
            case let .system(text): perLanguage(text)
            case let .handoff(h): perLanguage(h.message)
            case .tag, .untag, .notify, .set: false
            }
        }
    }
}
