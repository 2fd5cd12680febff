import Foundation
import UsherDiagnostics
import UsherRules
import UsherTranscripts
#if canImport(Glibc)
import Glibc
#endif

/// `usher replay BOT TRANSCRIPT…`: a dry run of recorded conversations.
enum ReplayCommand: Command {
    static let name = "replay"
    static let summary = "dry-run recorded conversations: what the bot would have said, coverage, differences"
    static let help = """
    Usage: usher replay BOT TRANSCRIPT… [options]

    Feeds every message of the recorded conversations in TRANSCRIPT… through the bot's rules
    (BOT is a folder with bot.yaml), in order, with each message's own time, and reports what
    the bot would have said and why, when it would have handed off, where it would have spoken
    although a human agent had already written, and which rules never fired. Nothing is
    written anywhere but the report; the recording drives the conversation, the bot's answers
    are hypothetical.

    Transcripts are JSON lines, plain or gzip-compressed (recognised by content, not by name;
    - reads standard input), in either shape, line by line:
      {"conversation":"c-42","id":"m-1","at":"2026-11-29T10:00:00Z","from":"customer","text":"hi"}
      {"id":"conv_0001","turns":[{"role":"user","content":"hi"},{"role":"agent","content":"…"}]}
    Roles: customer (user, client), agent (assistant, human, operator, support), bot, system.
    See docs/replay.md for both shapes, the timestamps given to turns, and the JSON schema.

    Options:
      --format FORMAT    text (default), json or html (one self-contained page)
      --out FILE         write the report to FILE instead of standard output
      --against OTHER    replay the same messages through the bot OTHER too, and list every
                         message they decide differently, grouped by transition
      --ignore-agents    do not give recorded agent messages to the bot: it answers as if it
                         were alone, and the report lists every place it would have spoken
                         although a human had already written. Default: an agent message takes
                         the conversation over, as in the worker (right for recordings made
                         with a bot; use --ignore-agents for human-only recordings)
      --skip-bad-lines   skip lines that are not valid transcript lines (and count them)
                         instead of stopping at the first
      --summary-only     leave out the conversations; print the totals only
      --start TIME       when the first turns-shape conversation starts, like
                         2026-11-30T10:00:00+08:00, or without the offset in the bot's time
                         zone (2026-11-30T10:00); default Monday 2026-11-30 10:00 in the bot's
                         zone; conversation k starts k minutes later, its turns 30 seconds apart
      -h, --help         show this help

    Text output is coloured on a terminal (not with NO_COLOR). A progress bar appears on
    standard error for long runs when it is a terminal and the report goes elsewhere.

    Exit status: 0 replayed, 1 a bot has errors (they are printed) or the report cannot be
    written, 64 usage error, 65 a transcript cannot be read (file:line:column and why).

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: ["--format", "--out", "--against", "--start"],
                              flags: ["--ignore-agents", "--skip-bad-lines", "--summary-only"])
        guard a.positionals.count >= 2 else {
            throw UsageError(a.positionals.isEmpty ? "needs a BOT and at least one TRANSCRIPT" : "needs at least one TRANSCRIPT after the BOT")
        }
        let format = try a.choice("--format", ["text", "json", "html"], default: "text")
        let botPath = a.positionals[0]
        let transcripts = Array(a.positionals.dropFirst())
        for t in transcripts where t != "-" {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: t, isDirectory: &isDir) else { throw UsageError("no such transcript: \(t)") }
            if isDir.boolValue { throw UsageError("\(t) is a folder; name the transcript files (\(t)/*.jsonl)") }
        }
        if transcripts.filter({ $0 == "-" }).count > 1 { throw UsageError("standard input (-) can be read only once") }
        var options = ReplayOptions(agents: a.flag("--ignore-agents") ? .ignore : .takeover, skipBadLines: a.flag("--skip-bad-lines"))
        guard let bot = load(botPath) else { return .failure }
        if let start = a.value("--start") {
            // Without an offset the time is the bot's, as a rule test's `start:` is.
            switch RuleTestTime.parse(start, in: bot.bot.calendar) {
            case let .success(date): options.timeline = .init(start: date)
            case let .failure(problem): throw UsageError("--start: \(problem.message)")
            }
        }
        var other: RuleSet?
        if let path = a.value("--against") {
            guard let o = load(path) else { return .failure }
            other = o
        }

        let out: ReportOutput
        if let path = a.value("--out") {
            do { out = try ReportOutput(path: path) } catch {
                Terminal.err("usher replay: \(error.message)\n")
                return .failure
            }
        } else {
            out = ReportOutput(fd: 1)
        }
        let runner = ReplayRunner(bot: bot, botPath: botPath, against: other, againstPath: a.value("--against") ?? "",
                                  transcripts: transcripts, options: options)
        let summaryOnly = a.flag("--summary-only")
        let bar = ProgressBar(files: transcripts, enabled: isatty(2) == 1 && (a.value("--out") != nil || isatty(1) == 0))
        let progress: (ReplayRunner.Progress) -> Void = { bar.update($0) }
        do {
            switch format {
            case "json":
                var w = ReportJSON(out, conversations: !summaryOnly)
                _ = try runner.run(transcripts, into: &w, progress: progress)
            case "html":
                var w = try ReportHTML(out, conversations: !summaryOnly)
                _ = try runner.run(transcripts, into: &w, progress: progress)
            default:
                var w = ReportText(out, colour: a.value("--out") == nil && Terminal.colour(), conversations: !summaryOnly)
                _ = try runner.run(transcripts, into: &w, progress: progress)
            }
        } catch let error as TranscriptError {
            bar.clear()
            out.flush()
            Terminal.err("\(error)\nusher replay: stopped; the report is incomplete\(error.isLineError ? " (--skip-bad-lines skips bad lines)" : "")\n")
            return .dataError
        } catch let error as ReportOutputError {
            bar.clear()
            Terminal.err("usher replay: \(error.message)\n")
            return .failure
        } catch {
            bar.clear()
            Terminal.err("usher replay: \(error)\n")
            return .failure
        }
        bar.clear()
        out.flush()
        if let failure = out.failure {
            Terminal.err("usher replay: cannot write the report: \(failure)\n")
            return .failure
        }
        if runner.skippedLines > 0 {
            Terminal.err("usher replay: skipped \(runner.skippedLines) bad line\(runner.skippedLines == 1 ? "" : "s"); the first: \(runner.badLines.first.map { "\($0)" } ?? "")\n")
        }
        return .ok
    }

    /// Loads a bot, printing its errors.
    private static func load(_ path: String) -> RuleSet? {
        let result = RuleSetLoader.loadBot(at: path)
        if let rs = result.ruleSet { return rs }
        var printer = DiagnosticPrinter(colour: Terminal.colour(stdout: false))
        printer.add(result.sources)
        Terminal.err(printer.render(all: result.diagnostics.filter { $0.severity == .error }))
        Terminal.err("usher replay: \(path) has errors; run 'usher check \(path)'\n")
        return nil
    }
}

/// The progress bar on standard error: shown only after half a second, redrawn at most ten
/// times a second, erased at the end.
final class ProgressBar {
    private let enabled: Bool
    private let sizes: [Int]
    private let started = ContinuousClock.now
    private var lastDraw: ContinuousClock.Instant?
    private var drawn = false

    init(files: [String], enabled: Bool) {
        self.enabled = enabled
        sizes = files.map { f in
            ((try? FileManager.default.attributesOfItem(atPath: f))?[.size] as? NSNumber)?.intValue ?? 0
        }
    }

    func update(_ p: ReplayRunner.Progress) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard now - started > .milliseconds(500) else { return }
        if let lastDraw, now - lastDraw < .milliseconds(100) { return }
        lastDraw = now
        let total = sizes.reduce(0, +)
        let done = sizes.prefix(p.file).reduce(0, +) + p.bytesRead
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
        let cells = 30
        let full = Int(fraction * Double(cells))
        let bar = String(repeating: "█", count: full) + String(repeating: "░", count: cells - full)
        Terminal.err("\r\(bar) \(Int(fraction * 100))%  \(p.conversations) conversations  file \(p.file + 1)/\(p.files)\u{1B}[K")
        drawn = true
    }

    func clear() {
        if drawn { Terminal.err("\r\u{1B}[K") }
        drawn = false
    }
}
