public import UsherDiagnostics
public import UsherYAML
public import UsherText
import Foundation
import UsherJSON

/// What loading a bot or rule files produced: the rule set when there were no errors, every
/// diagnostic (errors and lint warnings), and the text of each file read, for printing.
public struct LoadResult: Sendable {
    public let ruleSet: RuleSet?
    public let diagnostics: [Diagnostic]
    public let sources: [SourceText]
}

/// Loads bots (`bot.yaml` plus its rule files) and stand-alone rule files, validating everything
/// that can be known before a message arrives.
public enum RuleSetLoader {
    /// Limits applied while loading.
    public struct Options: Sendable {
        public var yaml: YAMLLimits
        public var patterns: PatternLimits
        public init(yaml: YAMLLimits = .default, patterns: PatternLimits = .default) {
            self.yaml = yaml
            self.patterns = patterns
        }
    }

    /// Loads a bot from its folder or its `bot.yaml`.
    public static func loadBot(at path: String, options: Options = .init()) -> LoadResult {
        loadBot(botPath: botFilePath(path), files: .disk, options: options)
    }

    /// Loads a bot from in-memory texts (tests, fuzzing): `files` maps paths to contents, and rule
    /// paths in the bot file are resolved against it instead of the disk.
    public static func loadBot(botPath: String, files: [String: String], options: Options = .init()) -> LoadResult {
        loadBot(botPath: botPath, files: .memory(files), options: options)
    }

    /// Checks rule files on their own, outside any bot: everything but schedule names is checked.
    /// The rule set carries a neutral bot (`id: check`, UTC).
    public static func loadRuleFiles(_ paths: [String], options: Options = .init()) -> LoadResult {
        var run = Run(files: .disk, options: options)
        let bot = BotConfig(id: "check", name: "Check", senderId: "bot:check",
                            timeZone: TimeZone(identifier: "UTC")!, ruleFiles: paths, path: paths.first ?? ".")
        return run.compile(bot: bot, scheduleNames: nil)
    }

    private static func loadBot(botPath: String, files: Files, options: Options) -> LoadResult {
        var run = Run(files: files, options: options)
        guard let doc = run.read(botPath, bot: true) else { return run.result(nil) }
        let reader = NodeReader(document: doc)
        let parsed = BotFileParser(reader: reader, files: files).parse()
        run.diagnostics += reader.diagnostics
        guard let parsed else { return run.result(nil) }
        // A mistake in bot.yaml (a time zone, a schedule) must not hide those of the rule
        // files: they are compiled all the same, and the errors keep the bot from loading.
        let result = run.compile(bot: parsed.bot, scheduleNames: parsed.scheduleNames)
        return parsed.valid ? result : run.result(nil)
    }

    /// Where files come from.
    enum Files {
        case disk
        case memory([String: String])

        /// The file's bytes; nil for a file that is not there; a diagnostic for one that cannot
        /// be read or is over `limit` bytes (never read whole to find that out).
        func contents(_ path: String, limit: Int) -> FileContents? {
            switch self {
            case .disk:
                guard FileManager.default.fileExists(atPath: path) else { return nil }
                return YAMLLoader.readFile(path: path, limit: limit)
            case let .memory(files): return files[path].map { .bytes(Array($0.utf8)) }
            }
        }

        func isFile(_ path: String) -> Bool {
            switch self {
            case .disk:
                var isDir: ObjCBool = false
                return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && !isDir.boolValue
            case let .memory(files): return files[path] != nil
            }
        }

        /// Whether `path` is a folder (in memory: some file's path starts with it and a '/').
        func isDirectory(_ path: String) -> Bool {
            switch self {
            case .disk:
                var isDir: ObjCBool = false
                return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
            case let .memory(files): return files.keys.contains { $0.hasPrefix(path + "/") }
            }
        }

        /// Glob matches, sorted.
        func glob(_ pattern: String) -> [String] {
            switch self {
            case .disk: return BotFileParser.diskGlob(pattern)
            case let .memory(files): return files.keys.filter { Glob(pattern).matches($0) }.sorted()
            }
        }
    }

    /// One load: the files read, their fingerprint, and the diagnostics so far.
    private struct Run {
        let files: Files
        let options: Options
        var diagnostics: [Diagnostic] = []
        var sources: [SourceText] = []
        var hasher = FNV1a()

        init(files: Files, options: Options) {
            self.files = files
            self.options = options
        }

        /// Reads and parses one file, recording its text; `nil` when there is nothing to use.
        mutating func read(_ path: String, bot: Bool) -> YAMLDocument? {
            let bytes: [UInt8]
            switch files.contents(path, limit: options.yaml.maxBytes) {
            case nil:
                diagnostics.append(missing(path, bot: bot))
                return nil
            case .refused(let d)?:
                diagnostics.append(d)   // at 1:1 of a file not read: no source line to quote
                return nil
            case .bytes(let read)?:
                bytes = read
            }
            hasher.add(bytes)
            hasher.add(0xFF)   // between files (never in UTF-8): "ab" + "c" and "a" + "bc" differ
            let (doc, d) = YAMLLoader.load(path: path, bytes: bytes, limits: options.yaml)
            diagnostics += d
            sources.append(doc?.source ?? SourceText(
                path: path, text: String(decoding: bytes.prefix(options.yaml.maxBytes), as: UTF8.self)))
            // An alias stands in the tree as an empty value and a too-deep file is cut short:
            // checking their meaning would only report the same mistake again in other words.
            if d.contains(where: { $0.code == "alias" || $0.code == "too-deep" }) { return nil }
            return doc?.root == nil ? nil : doc
        }

        mutating func compile(bot: BotConfig, scheduleNames: [String]?) -> LoadResult {
            var bot = bot
            let compiler = RuleCompiler(scheduleNames: scheduleNames, patternLimits: options.patterns, matching: bot.matching,
                                        languages: scheduleNames == nil ? nil : bot.languages)
            var tops: [(NodeReader, [String: YAMLNode])] = []
            for path in bot.ruleFiles {
                guard let doc = read(path, bot: false) else { continue }
                let reader = NodeReader(document: doc)
                if let top = compiler.collectLists(reader) { tops.append((reader, top)) } else { diagnostics += reader.diagnostics }
            }
            // Lists are bot-wide, so rules compile only once every file's lists are known.
            for (reader, top) in tops {
                compiler.compileRules(reader, top: top)
                diagnostics += reader.diagnostics
            }
            guard !diagnostics.hasErrors else { return result(nil) }
            if RuleSet.speaksPerLanguage(bot: bot, rules: compiler.rules, fallback: compiler.fallback) {
                readDictionariesForLanguageGuess(&bot)
            }
            let ruleSet = RuleSet(bot: bot, rules: compiler.rules, fallback: compiler.fallback,
                                  fallbackLocation: compiler.fallbackLocation,
                                  keywords: KeywordIndex(keywords: compiler.keywordTexts, matching: compiler.keywordMatching,
                                                         stemmers: bot.matching.contains(.forms) ? bot.languages.compactMap(Stemmer.init(language:)) : [],
                                                         dictionaries: bot.dictionaries),
                                  patterns: compiler.patterns, patternLocations: compiler.patternLocations,
                                  version: RuleSetLoader.version(hasher.value), sources: sources)
            diagnostics += RuleLinter(ruleSet: ruleSet).lint()
            return result(ruleSet)
        }

        /// Reads the dictionaries the language guess needs (those of the bot's languages written
        /// with spaces, when it has two or more) that typos did not already read. A missing one
        /// is a warning: the locale and the bot's first language still choose.
        mutating func readDictionariesForLanguageGuess(_ bot: inout BotConfig) {
            let spaced = bot.languages.filter { !BotFileParser.unspacedLanguages.contains($0) }
            guard bot.languages.count > 1 else { return }
            for code in spaced where !bot.dictionaries.contains(where: { $0.language == code }) {
                do {
                    bot.dictionaries.append(try SpellingDictionary.system(code))
                } catch {
                    diagnostics.append(.warning("missing-dictionary", "texts per language cannot tell a message in '\(code)' by its words: \(error.message); until then the conversation's locale, else '\(bot.languages[0])', decides", at: SourceLocation(file: bot.path, line: 1, column: 1)))
                }
            }
        }

        func result(_ ruleSet: RuleSet?) -> LoadResult {
            LoadResult(ruleSet: ruleSet, diagnostics: diagnostics, sources: sources)
        }
    }

    /// `bots/support` → `bots/support/bot.yaml`; a file path is returned as is.
    public static func botFilePath(_ path: String) -> String {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            return (path.hasSuffix("/") ? String(path.dropLast()) : path) + "/bot.yaml"
        }
        return path
    }

    /// The id a bot's bot.yaml gives (`bot: support`), read without loading the rules; `nil`
    /// when the file cannot be read or names no valid id (`usher check` says why).
    public static func botID(at path: String) -> String? {
        guard let root = YAMLLoader.loadFile(path: botFilePath(path)).0?.root,
              let id = root["bot"]?.scalar, BotFileParser.isValidID(id) else { return nil }
        return id
    }

    /// Whether a YAML file is a bot file (its top level has `bot:`) rather than a rule file.
    public static func isBotFile(_ path: String) -> Bool {
        if (path as NSString).lastPathComponent == "bot.yaml" { return true }
        // The first 64 KiB decide: a huge file is not read whole to find out.
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: 64 * 1024),
              let text = String(data: data, encoding: .utf8) else { return false }
        return text.split(separator: "\n").contains { $0.hasPrefix("bot:") }
    }

    /// The rule-set version: the first 12 hex digits of the files' FNV-1a.
    static func version(_ hash: UInt64) -> String {
        let s = String(hash, radix: 16)
        return String((String(repeating: "0", count: 16 - s.count) + s).prefix(12))
    }

    private static func missing(_ path: String, bot: Bool) -> Diagnostic {
        var isDir: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDir)
        let message = exists
            ? "cannot read '\(path)'; check its permissions"
            : bot ? "no bot file at '\(path)'; a bot is a folder with a bot.yaml (see bots/support)"
                  : "no such file '\(path)'"
        return .error("unreadable-file", message, at: SourceLocation(file: path, line: 1, column: 1))
    }
}
