import Foundation

/// How a replay treats the recording.
public struct ReplayOptions: Sendable {
    /// What recorded agent messages do.
    public enum Agents: String, Sendable, Hashable {
        /// They are given to the engine, as the worker would get them: the first one takes the
        /// conversation over and the bot falls silent. The default.
        case takeover
        /// They are not given to the engine: the bot answers as if it were alone, and the
        /// report lists where it would have spoken although a human had already written.
        case ignore
    }

    /// What recorded agent messages do (default: they take over).
    public var agents: Agents
    /// Skip lines that cannot be read (and count them) instead of stopping.
    public var skipBadLines: Bool
    /// Timestamps for the chat-dataset shape; `nil`: the default timeline, starting Monday
    /// 2026-11-30 at 10:00 in the bot's time zone (`ReplayRunner.timeline`).
    public var timeline: TranscriptReader.Timeline?
    /// Examples kept per `--against` transition.
    public var examplesPerTransition: Int
    /// Examples of "spoke over a human" kept for the summary.
    public var spokeOverExamples: Int
    /// Bad lines kept (with their errors) for the summary when skipping.
    public var badLineExamples: Int

    /// The defaults: agents take over, stop at the first bad line, the default timeline in the
    /// bot's time zone.
    public init(agents: Agents = .takeover, skipBadLines: Bool = false, timeline: TranscriptReader.Timeline? = nil,
                examplesPerTransition: Int = 3, spokeOverExamples: Int = 10, badLineExamples: Int = 10) {
        self.agents = agents
        self.skipBadLines = skipBadLines
        self.timeline = timeline
        self.examplesPerTransition = examplesPerTransition
        self.spokeOverExamples = spokeOverExamples
        self.badLineExamples = badLineExamples
    }
}
