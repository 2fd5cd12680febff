import Foundation
import UsherDiagnostics
import UsherRules
import UsherFirestore
import UsherSQLMapping

/// `usher check [PATH…]`: loads bots, rule files and SQL mapping files and prints every diagnostic.
enum CheckCommand: Command {
    static let name = "check"
    static let summary = "validate bots, rule files and SQL mappings; print every problem with file:line:col"
    static let help = """
    Usage: usher check [PATH…] [--strict] [--format text|json]

    Loads each bot (a folder with bot.yaml, or the bot.yaml itself) together with all of its rule
    files, each stand-alone rule file, and each SQL mapping file (a YAML file with a top-level
    'mapping:' key, see docs/mapping.md), and prints every problem the way a compiler does:

        rules/x.yaml:12:7: error: [unknown-key] unknown key 'whne' in a rule; did you mean 'when'?
            whne:
            ^

    Errors stop a bot or a mapping file from loading. Warnings (shadowed rules, unreachable
    thresholds, sequences longer than a rule can fire, duplicate keywords, risky regexes, values
    a mapping file gives for a column it does not map) do not, unless --strict.

    With no PATH: every bots/*/bot.yaml, and every rules/*.yaml that no bot uses.
    A folder without bot.yaml: every bot in its sub-folders and every *.yaml in it.

    Options:
      --strict          treat warnings as errors
      --format FORMAT   text (default) or json
      -h, --help        show this help

    Exit status: 0 no errors, 1 errors (or warnings with --strict), 64 usage error.

    """

    /// One thing to check.
    enum Target: Equatable {
        case bot(String)
        case ruleFile(String)
        case mapping(String)
        case firestoreMapping(String)

        var path: String { switch self { case let .bot(p), let .ruleFile(p), let .mapping(p), let .firestoreMapping(p): p } }
    }

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: ["--format"], flags: ["--strict"])
        let format = try a.choice("--format", ["text", "json"], default: "text")
        let targets = try resolve(a.positionals)

        var diagnostics: [Diagnostic] = []
        var printer = DiagnosticPrinter(colour: format == "text" && Terminal.colour())
        var summaries: [[String: Any]] = []
        var usedRuleFiles = Set<String>()
        for target in targets {
            let result: LoadResult
            switch target {
            case let .bot(path): result = RuleSetLoader.loadBot(at: path)
            case let .ruleFile(path):
                if usedRuleFiles.contains(path) { continue }
                result = RuleSetLoader.loadRuleFiles([path])
            case let .mapping(path):
                let (mapping, found, source) = SQLMapping.read(path: path)
                if let source { printer.add(source) }
                diagnostics += found
                var summary: [String: Any] = ["path": path, "kind": "mapping", "files": [path], "loaded": mapping != nil,
                                              "errors": found.filter { $0.severity == .error }.count]
                if let mapping {
                    summary["conversations"] = mapping.conversations.table
                    summary["messages"] = mapping.messages.table
                    summary["intake"] = mapping.intake.rawValue
                }
                summaries.append(summary)
                continue
            case let .firestoreMapping(path):
                let (layout, found, source) = FirestoreLayout.read(path: path)
                if let source { printer.add(source) }
                diagnostics += found
                var summary: [String: Any] = ["path": path, "kind": "firestore-mapping", "files": [path], "loaded": layout != nil,
                                              "errors": found.filter { $0.severity == .error }.count]
                if let layout { summary["summary"] = layout.summary }
                summaries.append(summary)
                continue
            }
            printer.add(result.sources)
            for d in result.diagnostics where !diagnostics.contains(d) { diagnostics.append(d) }
            usedRuleFiles.formUnion(result.sources.map(\.path))
            let own = result.diagnostics.filter { $0.severity == .error }.count
            var summary: [String: Any] = ["path": target.path, "kind": target.isBot ? "bot" : "rules",
                                          "files": result.sources.map(\.path), "loaded": result.ruleSet != nil,
                                          "errors": own]
            if let rs = result.ruleSet {
                summary["rules"] = rs.rules.count
                summary["version"] = rs.version
                if target.isBot { summary["bot"] = rs.bot.id }
            }
            summaries.append(summary)
        }
        if a.flag("--strict") {
            diagnostics = diagnostics.map { var d = $0; if d.severity == .warning { d.severity = .error }; return d }
        }
        let errors = diagnostics.filter { $0.severity == .error }.count
        let warnings = diagnostics.filter { $0.severity == .warning }.count

        if format == "json" {
            let json: [String: Any] = [
                "checked": summaries,
                "diagnostics": diagnostics.sortedForDisplay().map(jsonObject),
                "errors": errors, "warnings": warnings,
            ]
            let data = try! JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            Terminal.out(String(decoding: data, as: UTF8.self) + "\n")
        } else {
            Terminal.out(printer.render(all: diagnostics))
            for s in summaries {
                let path = s["path"] as! String
                guard s["loaded"] as! Bool else {
                    Terminal.out("\(path): not loaded, \(plural(s["errors"] as! Int, "error"))\n")
                    continue
                }
                if s["kind"] as! String == "firestore-mapping" {
                    Terminal.out("\(path): \(s["summary"] as! String)\n")
                    continue
                }
                if s["kind"] as! String == "mapping" {
                    Terminal.out("\(path): maps \(s["conversations"] as! String) and \(s["messages"] as! String), intake \(s["intake"] as! String)\n")
                    continue
                }
                let files = (s["files"] as! [String]).count
                Terminal.out("\(path): \(plural(s["rules"] as! Int, "rule")) in \(plural(files, "file")), version \(s["version"] as! String)\n")
            }
            let what = "\(targets.count) \(targets.count == 1 ? "target" : "targets")"
            if errors == 0 && warnings == 0 {
                Terminal.out("checked \(what): no problems\n")
            } else {
                Terminal.out("checked \(what): \(plural(errors, "error")), \(plural(warnings, "warning"))\n")
            }
        }
        return errors > 0 ? .failure : .ok
    }

    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    static func jsonObject(_ d: Diagnostic) -> [String: Any] {
        var o: [String: Any] = ["severity": d.severity.rawValue, "code": d.code, "message": d.message]
        if let l = d.location { o["file"] = l.file; o["line"] = l.line; o["column"] = l.column }
        o["notes"] = d.notes.map { n -> [String: Any] in
            var j: [String: Any] = ["message": n.message]
            if let l = n.location { j["file"] = l.file; j["line"] = l.line; j["column"] = l.column }
            return j
        }
        return o
    }

    /// Turns the command line's paths into bots, rule files and mapping files.
    static func resolve(_ paths: [String]) throws(UsageError) -> [Target] {
        let fm = FileManager.default
        var targets: [Target] = []
        func yamlFiles(in dir: String) -> [String] {
            ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted()
                .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.map { join(dir, $0) }
        }
        func addFolder(_ dir: String) {
            if fm.fileExists(atPath: join(dir, "bot.yaml")) { targets.append(.bot(dir)); return }
            for sub in ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted()
            where fm.fileExists(atPath: join(join(dir, sub), "bot.yaml")) {
                targets.append(.bot(join(dir, sub)))
            }
            for f in yamlFiles(in: dir) { targets.append(Target(file: f)) }
        }
        if paths.isEmpty {
            guard fm.fileExists(atPath: "bots") || fm.fileExists(atPath: "rules") else {
                throw UsageError("no PATH given and no bots/ or rules/ folder here")
            }
            addFolder("bots")
            targets += yamlFiles(in: "rules").map(Target.ruleFile)
            // Bots go first, so rule files they load are not checked again on their own.
            return targets
        }
        for p in paths {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: p, isDirectory: &isDir) else {
                throw UsageError("no such file or folder: \(p)")
            }
            if isDir.boolValue { addFolder(p) } else { targets.append(Target(file: p)) }
        }
        return targets
    }

    static func join(_ a: String, _ b: String) -> String { a.hasSuffix("/") ? a + b : a + "/" + b }
}

extension CheckCommand.Target {
    var isBot: Bool { if case .bot = self { true } else { false } }

    /// A YAML file: a bot file (`bot:`), a SQL mapping file (`mapping:`), a Firestore mapping
    /// file (`firestore:`) or else a rule file.
    init(file: String) {
        self = RuleSetLoader.isBotFile(file) ? .bot(file) : SQLMapping.isMappingFile(path: file) ? .mapping(file)
            : FirestoreLayout.isMappingFile(path: file) ? .firestoreMapping(file) : .ruleFile(file)
    }
}
