public import Foundation
public import UsherRules
import UsherYAML

/// A bot taking part in a replay, as reports name it.
public struct ReplayBotInfo: Sendable {
    /// The bot's id and display name.
    public var id: String
    public var name: String
    /// The folder or bot file the user named.
    public var path: String
    /// The rule-set version (a hash of every loaded file).
    public var version: String
    /// How many rules it has, and whether it has a fallback.
    public var rules: Int
    public var hasFallback: Bool
    /// The bot's time zone: reports show times in it (schedules are evaluated in it).
    public var timeZone: TimeZone
    /// `session.idle_reset` as written (`24h`), if the bot has one.
    public var idleResetText: String?

    /// The facts of `ruleSet`, loaded from `path`.
    public init(ruleSet: RuleSet, path: String) {
        id = ruleSet.bot.id
        name = ruleSet.bot.name
        self.path = path
        version = ruleSet.version
        rules = ruleSet.rules.count
        hasFallback = ruleSet.fallback != nil
        timeZone = ruleSet.bot.timeZone
        idleResetText = ruleSet.bot.idleReset.map { DurationText.format($0) }
    }
}

/// What a report knows before the first conversation.
public struct ReplayHeader: Sendable {
    /// The bot, and the other bot (`--against`).
    public var bot: ReplayBotInfo
    public var against: ReplayBotInfo?
    /// The transcript files, as named.
    public var transcripts: [String]
    /// How the replay treats the recording.
    public var options: ReplayOptions
    /// The times given to `turns` conversations.
    public var timeline: TranscriptReader.Timeline

    /// How the report names the two bots where it sets them side by side: by id; by the path
    /// the user named when they share an id (two versions of one bot, `--against`); by id and
    /// rule-set version when the paths are the same too. `against` is nil without `--against`.
    public var names: (bot: String, against: String?) {
        guard let a = against else { return (bot.id, nil) }
        if a.id != bot.id { return (bot.id, a.id) }
        if a.path != bot.path { return (bot.path, a.path) }
        return ("\(bot.id) \(bot.version)", "\(a.id) \(a.version)")
    }

    /// A header from its parts.
    public init(bot: ReplayBotInfo, against: ReplayBotInfo?, transcripts: [String], options: ReplayOptions,
                timeline: TranscriptReader.Timeline = .init()) {
        self.bot = bot
        self.against = against
        self.transcripts = transcripts
        self.options = options
        self.timeline = timeline
    }
}

/// What a report knows at the end.
public struct ReplayResult: Sendable {
    /// The bot's numbers.
    public var summary: ReplaySummary
    /// The other bot's numbers (`--against`).
    public var againstSummary: ReplaySummary?
    /// The differences between the bots (`--against`).
    public var diff: ReplayDiff?
    /// Non-blank lines read from all transcripts.
    public var records: Int
    /// Lines skipped with `--skip-bad-lines`, and the first few of their errors.
    public var skippedLines: Int
    public var badLines: [TranscriptError]
    /// Events-shape messages whose conversation and id had been seen before (ignored).
    public var duplicates: Int
    /// The most conversations held in memory at once.
    public var peakInFlight: Int
}

/// A report format: it gets the header, then each conversation as soon as it is complete, then
/// the totals — so a report can be written while the transcripts are still being read.
public protocol ReplayReportWriter {
    mutating func begin(_ header: ReplayHeader)
    mutating func add(_ conversation: ReplayConversation)
    mutating func end(_ result: ReplayResult)
}
