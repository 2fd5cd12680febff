import Foundation
import UsherRules

/// `usher schema`: the JSON Schemas editors use to validate and complete Usher files.
enum SchemaCommand: Command {
    static let name = "schema"
    static let summary = "print the JSON Schema of rule files or bot files, for editors"
    static let help = """
    Usage: usher schema [rules|bot] [--out DIR]

    Prints the JSON Schema (draft-07) of rule files (default) or of bot files, built from the
    rule language's declaration; schema/*.json in the repository are the same text. Editors with
    the YAML language server validate and complete files whose first line names the schema:

        # yaml-language-server: $schema=../schema/rules.schema.json

    Options:
      --out DIR    write both schemas to DIR/rules.schema.json and DIR/bot.schema.json instead
                   (usher schema --out schema regenerates the repository's copies)
      -h, --help   show this help

    Exit status: 0 ok, 1 a file could not be written, 64 usage error.

    """

    static func run(_ args: [String]) throws(UsageError) -> ExitCode {
        let a = try Arguments(args, options: ["--out"], flags: [])
        guard a.positionals.count <= 1 else { throw UsageError("too many arguments") }
        if let dir = a.value("--out") {
            guard a.positionals.isEmpty else { throw UsageError("--out writes both schemas; leave out 'rules'/'bot'") }
            do {
                try write(to: dir)
            } catch {
                Terminal.err("usher schema: cannot write to \(dir): \(error.localizedDescription)\n")
                return .failure
            }
            Terminal.out("wrote \(dir)/rules.schema.json and \(dir)/bot.schema.json\n")
            return .ok
        }
        switch a.positionals.first ?? "rules" {
        case "rules": Terminal.out(JSONSchema.ruleFile.text)
        case "bot": Terminal.out(JSONSchema.botFile.text)
        case let other: throw UsageError("unknown schema '\(other)'; use 'rules' or 'bot'")
        }
        return .ok
    }

    /// Writes both schemas into `dir` (made if missing): `rules.schema.json`, `bot.schema.json`.
    static func write(to dir: String) throws {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try Data(JSONSchema.ruleFile.text.utf8).write(to: URL(fileURLWithPath: dir + "/rules.schema.json"))
        try Data(JSONSchema.botFile.text.utf8).write(to: URL(fileURLWithPath: dir + "/bot.schema.json"))
    }
}
