import Foundation
public import UsherRules
public import UsherDiagnostics
import Synchronization

/// One bot in a running worker: its current rule set, swapped atomically on reload; a broken
/// reload keeps the last good rules.
public final class BotRuntime: Sendable {
    /// What a reload did.
    public enum ReloadOutcome: Sendable, Equatable {
        case reloaded(version: String)
        case unchanged
        /// The files have errors; the running rules stay. The text names file:line:col.
        case rejected(String)
    }

    /// The folder or bot.yaml the bot was started from.
    public let path: String
    /// Where the warnings of each load go (`rules-warning`); nil: nowhere.
    private let log: Logger?
    private let current: Mutex<RuleSet>
    private let currentWarnings: Mutex<[Diagnostic]>
    private let lastReloadOK = Mutex(true)
    /// The loaded files and the modification times of them and their folders.
    private let watched: Mutex<(files: [String], stamps: [String: Date])>

    /// Loads the bot; fails with the rendered diagnostics when it has errors. The load's
    /// warnings (a catastrophic regex, a rule that can never fire) are logged to `log`, as are
    /// those of every reload that swaps new rules in.
    public init(path: String, log: Logger? = nil) throws(RuntimeError) {
        self.path = path
        self.log = log
        let result = RuleSetLoader.loadBot(at: path)
        guard let ruleSet = result.ruleSet else {
            throw RuntimeError("bot-invalid", "\(path) has errors; run 'usher check \(path)':\n" + Self.render(result))
        }
        current = Mutex(ruleSet)
        currentWarnings = Mutex(Self.warnings(of: result))
        let files = ruleSet.sources.map(\.path)
        watched = Mutex((files, Self.stamps(of: files)))
        logWarnings(ruleSet)
    }

    /// The rule set decisions use now.
    public var ruleSet: RuleSet { current.withLock { $0 } }

    /// The warnings of the load that gave `ruleSet`, as `usher check` prints their headlines.
    public var warnings: [Diagnostic] { currentWarnings.withLock { $0 } }

    /// At most this many `rules-warning` lines per load; then one line says how many more.
    static let maxLoggedWarnings = 20

    public var id: String { ruleSet.bot.id }

    /// Whether the last reload succeeded (the `usher_rules_last_reload_successful` gauge).
    public var lastReloadSucceeded: Bool { lastReloadOK.withLock { $0 } }

    /// Loads and validates the whole bot aside; swaps it in if it is valid and different.
    public func reload() -> ReloadOutcome {
        let result = RuleSetLoader.loadBot(at: path)
        guard let fresh = result.ruleSet else {
            lastReloadOK.withLock { $0 = false }
            // Remember these files so an unchanged broken file is not reloaded every second.
            let files = result.sources.map(\.path)
            watched.withLock { $0 = (files, Self.stamps(of: files)) }
            return .rejected(Self.render(result))
        }
        lastReloadOK.withLock { $0 = true }
        let files = fresh.sources.map(\.path)
        watched.withLock { $0 = (files, Self.stamps(of: files)) }
        let swapped = current.withLock { rs -> Bool in
            guard rs.version != fresh.version else { return false }
            rs = fresh
            return true
        }
        guard swapped else { return .unchanged }
        currentWarnings.withLock { $0 = Self.warnings(of: result) }
        logWarnings(fresh)
        return .reloaded(version: fresh.version)
    }

    private static func warnings(of result: LoadResult) -> [Diagnostic] {
        result.diagnostics.filter { $0.severity == .warning }.sortedForDisplay()
    }

    /// One `rules-warning` line per warning of the rules now running (the first
    /// `maxLoggedWarnings`), then `rules-warnings-more` with the count of the rest.
    private func logWarnings(_ ruleSet: RuleSet) {
        guard let log, log.enabled(.warning) else { return }
        let all = warnings
        for d in all.prefix(Self.maxLoggedWarnings) {
            log.warning("rules-warning", ["bot": ruleSet.bot.id, "version": ruleSet.version, "code": d.code,
                                          "at": d.location.map { "\($0)" }, "warning": d.message])
        }
        if all.count > Self.maxLoggedWarnings {
            log.warning("rules-warnings-more", ["bot": ruleSet.bot.id, "version": ruleSet.version,
                                                "count": all.count - Self.maxLoggedWarnings, "hint": "usher check \(path) lists them all"])
        }
    }

    /// Whether any loaded file changed since the last load, or a file was added to or removed
    /// from one of their folders (a new file may match a glob of bot.yaml).
    public func filesChanged() -> Bool {
        let (files, known) = watched.withLock { $0 }
        return Self.stamps(of: files) != known
    }

    /// Modification times of the files and of their folders.
    private static func stamps(of paths: [String]) -> [String: Date] {
        var out: [String: Date] = [:]
        let all = Set(paths + paths.map { ($0 as NSString).deletingLastPathComponent }.map { $0.isEmpty ? "." : $0 })
        for p in all {
            out[p] = (try? FileManager.default.attributesOfItem(atPath: p)[.modificationDate] as? Date) ?? .distantPast
        }
        return out
    }

    static func render(_ result: LoadResult) -> String {
        var printer = DiagnosticPrinter()
        printer.add(result.sources)
        return printer.render(all: result.diagnostics.filter { $0.severity == .error })
    }

    /// Whether this bot answers conversations on `channel`, given every bot of the worker.
    public func owns(channel: String?, among bots: [BotRuntime]) -> Bool {
        let mine = ruleSet.bot.channels
        if !mine.isEmpty { return mine.contains { $0.matches(channel) } }
        return !bots.contains { other in other !== self && other.ruleSet.bot.channels.contains { $0.matches(channel) } }
    }
}

/// A runtime failure with a stable code (the CLI maps it to an exit status).
public struct RuntimeError: Error, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String
    public init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}
