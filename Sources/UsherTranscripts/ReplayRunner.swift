import Foundation
import UsherEngine
import UsherText
public import UsherRules

/// Replays recorded conversations through one bot (or two, with `--against`): every recorded
/// message is given to `Engine.decide` in order, with the message's time as `now`; what the bot
/// decides is hypothetical and never changes the recording.
///
/// Streaming: a `turns` line is a whole conversation, decided and handed on at once. Events of
/// interleaved conversations are kept per conversation until the conversation's session is over
/// (the transcript's clock is `session.idle_reset` past its last message) or the input ends.
/// After that only its engine state stays (tags, metadata and cooldowns outlive a session: a few
/// hundred bytes), so that a later session of the same conversation is decided as the worker
/// would decide it.
public final class ReplayRunner {
    /// How the replay treats the recording, and what reports are told first.
    public let options: ReplayOptions

    /// Decisions on a clock that never moves: the decision's time budget
    /// (`limits.decision_budget`) never runs out in a replay, so the same transcripts give the
    /// same report on a busy machine as on an idle one (a regex starved of the CPU for 10 ms
    /// would otherwise count as no match). The regexes' own match limits still hold; the
    /// budget guards the worker, and `usher explain` shows where it runs out.
    static let decisionOptions = Engine.Options(clock: .stopped)
    public let header: ReplayHeader
    /// The times given to `turns` conversations: `options.timeline`, or the default one
    /// starting Monday 2026-11-30 10:00 in the bot's time zone.
    public let timeline: TranscriptReader.Timeline
    private let bots: [RuleSet]

    /// The bot's numbers so far, the other bot's (`--against`), and their differences.
    public private(set) var summary: ReplaySummary
    public private(set) var againstSummary: ReplaySummary?
    public private(set) var diff: ReplayDiff?
    /// The most conversations held at once (each with all its messages).
    public private(set) var peakInFlight = 0
    /// Events-shape messages ignored because their conversation and id were seen before.
    public private(set) var duplicates = 0
    /// Lines skipped (`skipBadLines`), the first few of their errors, and records read.
    public private(set) var skippedLines = 0
    public private(set) var badLines: [TranscriptError] = []
    public private(set) var records = 0

    /// A conversation being replayed.
    private struct Flight {
        var conversation: ReplayConversation
        var states: [ConversationState]
        var order: Int
        var lastAt: Date?
        var lastLine = 0
        var humanPresent = false
        var seenIDs: Set<String> = []
    }

    /// What stays of a reported events-shape conversation.
    private struct Dormant {
        var states: [ConversationState]
        var parts: Int
        var lastAt: Date?
        var lastLine: Int
    }

    private var inFlight: [String: Flight] = [:]
    private var dormant: [String: Dormant] = [:]
    private var order = 0
    private var clock: Date?
    private var eventsSinceSweep = 0
    /// Conversations whose session must be over before they are reported (nil: never early).
    private let flushAfter: TimeInterval?
    /// Silence after which the recording is in a new session (for "a human had written").
    private let recordingIdleReset: TimeInterval?

    /// A replay of `bot`, and of `against` beside it. `botPath`/`againstPath` name them in reports.
    public init(bot: RuleSet, botPath: String = "", against: RuleSet? = nil, againstPath: String = "",
                transcripts: [String] = [], options: ReplayOptions = .init()) {
        self.options = options
        timeline = options.timeline ?? .init(start: TranscriptReader.Timeline.defaultStart(in: bot.bot.timeZone))
        bots = [bot] + (against.map { [$0] } ?? [])
        header = ReplayHeader(bot: ReplayBotInfo(ruleSet: bot, path: botPath),
                              against: against.map { ReplayBotInfo(ruleSet: $0, path: againstPath) },
                              transcripts: transcripts, options: options, timeline: timeline)
        summary = ReplaySummary(ruleSet: bot)
        againstSummary = against.map { ReplaySummary(ruleSet: $0) }
        diff = against == nil ? nil : ReplayDiff()
        let resets = bots.map(\.bot.idleReset)
        flushAfter = resets.contains { $0 == nil } ? nil : resets.compactMap { $0 }.max()
        recordingIdleReset = bot.bot.idleReset
    }

    /// Conversations currently held.
    public var inFlightCount: Int { inFlight.count }

    // MARK: Records

    /// Replays one record. Returns the conversations that are complete now, in the order they
    /// first appeared; their numbers are already in `summary`.
    public func add(_ record: TranscriptRecord, file: String) throws(TranscriptError) -> [ReplayConversation] {
        records += 1
        switch record {
        case let .conversation(t):
            var flight = Flight(conversation: ReplayConversation(id: t.id, file: file, line: t.line, format: .turns),
                                states: bots.map { _ in ConversationState(conversationID: t.id, channel: t.channel, locale: t.locale) },
                                order: order)
            order += 1
            flight.conversation.steps.reserveCapacity(t.messages.count)
            peakInFlight = max(peakInFlight, inFlight.count + 1)
            for m in t.messages { step(m, &flight) }
            complete(flight.conversation)
            return [flight.conversation]
        case let .event(m):
            return try event(m, file: file)
        }
    }

    private func event(_ m: TranscriptMessage, file: String) throws(TranscriptError) -> [ReplayConversation] {
        let id = m.message.conversationID
        if inFlight[id] == nil {
            let before = dormant.removeValue(forKey: id)
            let states = before?.states ?? bots.map { _ in ConversationState(conversationID: id, channel: m.channel, locale: m.locale) }
            var f = Flight(conversation: ReplayConversation(id: id, file: file, line: m.line, format: .events, part: (before?.parts ?? 0) + 1),
                           states: states, order: order)
            f.lastAt = before?.lastAt
            f.lastLine = before?.lastLine ?? 0
            order += 1
            inFlight[id] = f
            peakInFlight = max(peakInFlight, inFlight.count)
        }
        do {
            try accept(m, file: file, &inFlight[id]!)
        } catch {
            // A conversation that came back with a bad first message: keep it as it was.
            if let f = inFlight[id], f.conversation.steps.isEmpty {
                inFlight[id] = nil
                if f.conversation.part > 1 {
                    dormant[id] = Dormant(states: f.states, parts: f.conversation.part - 1, lastAt: f.lastAt, lastLine: f.lastLine)
                }
            }
            throw error
        }
        clock = max(clock ?? m.message.at, m.message.at)
        eventsSinceSweep += 1
        guard eventsSinceSweep >= 1024, let flushAfter, let clock else { return [] }
        eventsSinceSweep = 0
        let over = inFlight.values.filter { f in f.lastAt.map { clock.timeIntervalSince($0) >= flushAfter } ?? false }
        return over.sorted { $0.order < $1.order }.map { retire($0) }
    }

    /// Checks an event against its conversation (order, duplicates), then replays it.
    private func accept(_ m: TranscriptMessage, file: String, _ f: inout Flight) throws(TranscriptError) {
        if f.seenIDs.contains(m.message.id) {
            duplicates += 1
            return
        }
        if let last = f.lastAt, m.message.at < last {
            throw TranscriptError("out-of-order",
                                  "this message (\(TranscriptTime.format(m.message.at))) is earlier than the previous message of conversation '\(m.message.conversationID)' (line \(f.lastLine), \(TranscriptTime.format(last))); events must be in time order",
                                  file: file, line: m.line, column: 1)
        }
        f.seenIDs.insert(m.message.id)
        if let ch = m.channel { for i in f.states.indices where f.states[i].channel == nil { f.states[i].channel = ch } }
        if let lc = m.locale { for i in f.states.indices where f.states[i].locale == nil { f.states[i].locale = lc } }
        f.lastLine = m.line
        step(m, &f)
    }

    /// Replays one message of a conversation.
    private func step(_ m: TranscriptMessage, _ f: inout Flight) {
        let message = m.message
        if let last = f.lastAt, let reset = recordingIdleReset, message.at.timeIntervalSince(last) >= reset {
            f.humanPresent = false
        }
        f.lastAt = message.at
        var step = ReplayStep(message: message, line: m.line, humanHadWritten: f.humanPresent)
        if !(message.from == .agent && options.agents == .ignore) {
            for b in bots.indices {
                let before = f.states[b]
                let d = Engine.decide(bots[b], before, message, now: message.at, options: Self.decisionOptions)
                f.states[b] = d.state
                let outcome = ReplayOutcome(d, before: before, message: message)
                if b == 0 { step.bot = outcome } else { step.against = outcome }
            }
        }
        if message.from == .agent { f.humanPresent = true }
        f.conversation.steps.append(step)
    }

    /// Reports an events-shape conversation and keeps its engine state.
    private func retire(_ f: Flight) -> ReplayConversation {
        inFlight[f.conversation.id] = nil
        dormant[f.conversation.id] = Dormant(states: f.states, parts: f.conversation.part, lastAt: f.lastAt, lastLine: f.lastLine)
        complete(f.conversation)
        return f.conversation
    }

    private func complete(_ c: ReplayConversation) {
        summary.add(c, keepExamples: options.spokeOverExamples)
        againstSummary?.add(c, against: true, keepExamples: options.spokeOverExamples)
        diff?.add(c, keepExamples: options.examplesPerTransition)
    }

    /// Ends the replay: the conversations still in flight, in the order they first appeared.
    public func finish() -> [ReplayConversation] {
        inFlight.values.sorted { $0.order < $1.order }.map { retire($0) }
    }

    /// Notes a bad line that is being skipped.
    public func skip(_ error: TranscriptError) {
        skippedLines += 1
        if badLines.count < options.badLineExamples { badLines.append(error) }
    }

    /// The totals so far.
    public var result: ReplayResult {
        ReplayResult(summary: summary, againstSummary: againstSummary, diff: diff, records: records,
                     skippedLines: skippedLines, badLines: badLines, duplicates: duplicates, peakInFlight: peakInFlight)
    }

    // MARK: Files

    /// How far a replay has got.
    public struct Progress: Sendable {
        /// Index of the file being read, and how many there are.
        public var file: Int
        public var files: Int
        /// Bytes of the current file consumed (compressed bytes for gzip) and its size.
        public var bytesRead: Int
        public var fileSize: Int?
        /// Conversations reported so far.
        public var conversations: Int
    }

    /// Reads every transcript in order, replays it, and writes the report: header, each
    /// conversation as it completes, totals. Stops at the first bad line unless
    /// `options.skipBadLines`; stops at a file that cannot be read.
    public func run<W: ReplayReportWriter>(_ paths: [String], into writer: inout W,
                                           progress: ((Progress) -> Void)? = nil) throws(TranscriptError) -> ReplayResult {
        writer.begin(header)
        var conversationIndex = 0
        var reported = 0
        for (fileIndex, path) in paths.enumerated() {
            let reader = try TranscriptReader(path: path, timeline: timeline, firstConversationIndex: conversationIndex)
            var sinceProgress = 0
            while true {
                do {
                    guard let record = try reader.next() else { break }
                    for c in try add(record, file: path) {
                        writer.add(c)
                        reported += 1
                    }
                } catch {
                    guard error.isLineError, options.skipBadLines else { throw error }
                    skip(error)
                }
                sinceProgress += 1
                if let progress, sinceProgress >= 256 {
                    sinceProgress = 0
                    progress(Progress(file: fileIndex, files: paths.count, bytesRead: reader.bytesRead,
                                      fileSize: reader.fileSize, conversations: reported))
                }
            }
            conversationIndex = reader.conversationIndex
        }
        for c in finish() { writer.add(c) }
        let r = result
        writer.end(r)
        return r
    }
}
