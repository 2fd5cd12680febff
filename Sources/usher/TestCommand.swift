import Foundation
import UsherDiagnostics
import UsherEngine
import UsherRules
import UsherTranscripts

/// `usher test [PATH…]`: runs rule tests (DESIGN.md §4; the file format is in docs/rule-tests.md).
enum TestCommand: Command {
    static let name = "test"
    static let summary = "run rule tests (bots/<bot>/tests/*.yaml); print every failing step"
    static let help = """
    Usage: usher test [PATH…] [--filter TEXT] [--bot BOT] [--verbose]

    Runs rule tests. Each test plays a conversation against the bot's rules, from a fresh
    conversation on a virtual clock, and checks what the bot does after each customer message.
    The test file format is described in docs/rule-tests.md.

    PATH is a bot (a folder with bot.yaml: runs its tests/*.yaml), a bot's tests/ folder, a test
    file (its bot is the folder above tests/) or a folder of bots. With no PATH: the tests of
    every bot in bots/.

    Passing tests print nothing. A failing step prints its file:line:col, the test's name, what
    was expected against what the bot did, and the decision trace of that message (as 'usher
    explain' shows it): the rules that fired, were held back or were expected, then one line
    counting the others (--verbose shows them all). After the failures, 'Failed:' lists each
    failed test again (file:line:col and name); with several bots, each bot's counts follow.
    The last line is 'N passed, N failed', counting tests.

    A test file with errors runs none of its tests: its diagnostics are printed and each of its
    tests counts as failed. So do the tests of a bot that does not load.

    Options:
      --filter TEXT   run only the tests whose name contains TEXT (case-insensitive)
      --bot BOT       run the tests against BOT instead of the bot above tests/ (try a changed
                      copy of the rules against the tests, or run test files kept elsewhere)
      --verbose       also print each test file and each test's name, with ✓ or ✗, and
                      every rule in the trace of a failing step
      -h, --help      show this help

    Exit status: 0 every test passed, 1 a test failed (or a test file has errors, or a bot does
    not load, or --filter matched no test), 64 usage error.

    """

    /// One bot and the test files to run against it.
    struct Job: Equatable {
        var bot: String
        var files: [String]
    }

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: ["--filter", "--bot"], flags: ["--verbose"])
        let filter = a.value("--filter").flatMap { $0.isEmpty ? nil : $0 }
        let override = a.value("--bot")
        if let override, !FileManager.default.fileExists(atPath: RuleSetLoader.botFilePath(override)) {
            throw UsageError("--bot: no bot at \(override); a bot is a folder with a bot.yaml")
        }
        let jobs = try resolve(a.positionals, bot: override)
        var run = Run(verbose: a.flag("--verbose"), filter: filter, colour: Terminal.colour())
        for job in jobs { run.run(job) }
        if let filter, run.passed + run.failed == 0 {
            Terminal.out(run.output + "0 passed, 0 failed\n")
            Terminal.err("usher test: no test name contains '\(filter)'\n")
            return .failure
        }
        Terminal.out(run.output + run.closing())
        return run.failed == 0 ? .ok : .failure
    }

    /// Runs jobs and collects what to print.
    struct Run {
        let verbose: Bool
        let filter: String?
        let colour: Bool
        var output = ""
        var passed = 0
        var failed = 0
        var printer: DiagnosticPrinter
        /// What failed, in order, for the closing list: `file:line:col  name`.
        var failures: [String] = []
        /// Each bot's counts, in the order run.
        var bots: [(bot: String, passed: Int, failed: Int)] = []

        init(verbose: Bool, filter: String?, colour: Bool) {
            self.verbose = verbose
            self.filter = filter
            self.colour = colour
            printer = DiagnosticPrinter(colour: colour)
        }

        mutating func run(_ job: Job) {
            let before = (passed, failed)
            defer { bots.append((job.bot, passed - before.0, failed - before.1)) }
            let loaded = RuleSetLoader.loadBot(at: job.bot)
            guard let ruleSet = loaded.ruleSet else {
                printer.add(loaded.sources)
                let errors = loaded.diagnostics.filter { $0.severity == .error }
                output += printer.render(all: errors)
                let count = job.files.reduce(0) { $0 + max(1, RuleTestSuite.load(path: $1, bot: nil).testCount) }
                output += "\(job.bot): not loaded, \(CheckCommand.plural(errors.count, "error")); \(CheckCommand.plural(count, "test")) not run\n"
                failures.append("\(job.bot)  the bot does not load: \(CheckCommand.plural(count, "test")) not run")
                failed += count
                return
            }
            if job.files.isEmpty {
                output += "\(job.bot): no test files (add \(TestCommand.join(job.bot, "tests"))/*.yaml)\n"
            }
            for file in job.files { run(file, ruleSet) }
        }

        private mutating func run(_ file: String, _ ruleSet: RuleSet) {
            let load = RuleTestSuite.load(path: file, bot: ruleSet)
            if let source = load.source { printer.add(source) }
            output += printer.render(all: load.diagnostics)
            guard let suite = load.suite else {
                let count = max(1, load.testCount)
                let errors = load.diagnostics.filter { $0.severity == .error }.count
                output += "\(file): not run, \(CheckCommand.plural(errors, "error")); \(CheckCommand.plural(count, "test")) counted as failed\n"
                failures.append("\(file)  the file has errors: \(CheckCommand.plural(count, "test")) not run")
                failed += count
                return
            }
            let results = RuleTestRunner.run(suite, ruleSet: ruleSet, filter: filter)
            if verbose, !results.isEmpty { output += "\(file)\n" }
            for result in results {
                if result.passed {
                    passed += 1
                    if verbose { output += "  \(paint("✓", "32")) \(result.test.name)\n" }
                } else {
                    failed += 1
                    failures.append("\(result.test.location)  \(result.test.name)")
                    if verbose { output += "  \(paint("✗", "31")) \(result.test.name)\n" }
                    for failure in result.failures { output += report(failure, of: result, ruleSet) }
                }
            }
        }

        /// The end of the output: the failed tests again, where each starts and its name (the
        /// failures above can be pages long), each bot's counts when there are several, and the
        /// last line, `N passed, N failed`.
        func closing() -> String {
            var out = ""
            if !failures.isEmpty {
                out += paint("Failed:", "1;31") + "\n" + failures.map { "  \($0)\n" }.joined()
            }
            if bots.count > 1 {
                let width = bots.map(\.bot.count).max()! + 1
                for b in bots { out += "\((b.bot + ":").padding(width))\(b.passed) passed, \(b.failed) failed\n" }
            }
            return out + "\(passed) passed, \(failed) failed\n"
        }

        /// The headline `file:line:col: FAIL name: step N, customer "…"`, what differed, and the
        /// message's decision trace.
        func report(_ f: RuleTestFailure, of result: RuleTestResult, _ ruleSet: RuleSet) -> String {
            var out = "\(f.step.location): \(paint("FAIL", "1;31")) \(result.test.name): step \(f.stepNumber), \(f.step.summary)\n"
            for m in f.mismatches { out += "    \(m)\n" }
            let time = DateFormatter()
            time.locale = Locale(identifier: "en_US_POSIX")
            time.timeZone = ruleSet.bot.timeZone
            time.dateFormat = "EEE yyyy-MM-dd HH:mm:ss"
            let s = f.decision.state
            out += "    trace (\(time.string(from: f.time)) \(ruleSet.bot.timeZone.identifier), customer message \(s.customerMessages) of session \(s.session), owner \(f.stateBefore.owner.rawValue)):\n"
            if f.decision.outcome == .silent(.agent) {
                out += "      no rule was evaluated: an agent has taken over the conversation\n"
            }
            let text = if case let .customer(t) = f.step.action { t } else { "" }
            out += ExplainReport(ruleSet: ruleSet, decision: f.decision, text: text, now: f.time, colour: colour)
                .ruleLines(indent: "      ", keeping: verbose ? nil : Self.rulesThatMatter(f), foldNote: " (--verbose shows every rule)")
            return out + "\n"
        }

        /// The rules a failing step's trace shows first: those that fired or were held back
        /// (once, cooldown), those the test expected, those whose replies a limit dropped;
        /// `nil` (every rule) when none of them is in the trace.
        static func rulesThatMatter(_ f: RuleTestFailure) -> Set<String>? {
            var keep = Set(f.decision.trace?.filter {
                switch $0.verdict {
                case .fired, .blocked: true
                case .notMatched, .disabled, .notReached: false
                }
            }.map(\.rule) ?? [])
            keep.formUnion(f.step.expectation?.rules ?? [])
            // A handoff reason is most often the id of the rule that hands off.
            if case let .reason(r)? = f.step.expectation?.handoff, f.decision.trace?.contains(where: { $0.rule == r }) == true { keep.insert(r) }
            keep.formUnion(f.decision.limit?.rules ?? [])
            return keep.isEmpty ? nil : keep
        }

        private func paint(_ s: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }
    }

    // MARK: Paths

    /// Turns the command line's paths into bots and their test files; `bot` replaces every
    /// test file's own bot.
    static func resolve(_ paths: [String], bot override: String?) throws(UsageError) -> [Job] {
        let fm = FileManager.default
        func isDir(_ p: String) -> Bool {
            var d: ObjCBool = false
            return fm.fileExists(atPath: p, isDirectory: &d) && d.boolValue
        }
        func isBot(_ dir: String) -> Bool { fm.fileExists(atPath: join(dir, "bot.yaml")) }
        func testFiles(in dir: String) -> [String] {
            let names = (try? fm.contentsOfDirectory(atPath: dir)) ?? []
            return names.filter { ["yaml", "yml"].contains(($0 as NSString).pathExtension) }.sorted()
                .map { join(dir, $0) }.filter { !isDir($0) }
        }
        func bots(in dir: String) -> [Job] {
            ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted().map { join(dir, $0) }
                .filter { isDir($0) && isBot($0) }.map { Job(bot: $0, files: testFiles(in: join($0, "tests"))) }
        }

        var jobs: [Job] = []
        if paths.isEmpty {
            guard isDir("bots") else { throw UsageError("no PATH given and no bots/ folder here") }
            jobs = bots(in: "bots")
        }
        for p in paths {
            guard fm.fileExists(atPath: p) else { throw UsageError("no such file or folder: \(p)") }
            let path = p.count > 1 && p.hasSuffix("/") ? String(p.dropLast()) : p
            let parent = parentFolder(path)
            if isDir(path) {
                if isBot(path) {
                    jobs.append(Job(bot: path, files: testFiles(in: join(path, "tests"))))
                } else if lastComponent(path) == "tests", isBot(parent) {
                    jobs.append(Job(bot: parent, files: testFiles(in: path)))
                } else {
                    let found = bots(in: path)
                    guard !found.isEmpty || override != nil else {
                        throw UsageError("\(p) is not a bot (no bot.yaml), a bot's tests/ folder or a folder of bots")
                    }
                    jobs += found.isEmpty ? [Job(bot: override!, files: testFiles(in: path))] : found
                }
            } else if RuleSetLoader.isBotFile(path) {
                jobs.append(Job(bot: parent, files: testFiles(in: join(parent, "tests"))))
            } else if lastComponent(parent) == "tests", isBot(parentFolder(parent)) {
                jobs.append(Job(bot: parentFolder(parent), files: [path]))
            } else if let override {
                jobs.append(Job(bot: override, files: [path]))
            } else {
                throw UsageError("cannot tell which bot \(p) is for: test files live in BOT/tests/; name the bot with --bot BOT")
            }
        }
        if let override { jobs = jobs.map { Job(bot: override, files: $0.files) } }
        // One load per bot, each file once, in the order given.
        var merged: [Job] = []
        for job in jobs {
            if let i = merged.firstIndex(where: { $0.bot == job.bot }) {
                merged[i].files += job.files.filter { !merged[i].files.contains($0) }
            } else {
                merged.append(job)
            }
        }
        return merged
    }

    static func join(_ a: String, _ b: String) -> String { a == "." ? b : a.hasSuffix("/") ? a + b : a + "/" + b }

    private static func parentFolder(_ p: String) -> String {
        let parent = (p as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }

    private static func lastComponent(_ p: String) -> String { (p as NSString).lastPathComponent }
}
