import Foundation
import Testing

/// `usher new BOT`: the starter bot checks clean and its tests pass, as a support lead would
/// run them.
@Suite("usher new")
struct NewBotTests {
    private func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-new-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func theStarterBotChecksCleanAndPassesItsTests() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A project with the schemas in schema/, as the repository has them.
        #expect(try runUsher(["schema", "--out", "schema"], stdout: true, in: dir).status == 0)
        let made = try runUsher(["new", "bots/airline", "--timezone", "Europe/Madrid", "--name", "Sky Air"], stdout: true, in: dir)
        #expect(made.status == 0, "\(made.output)")
        #expect(made.output.hasPrefix("created bots/airline: bot.yaml, rules.yaml, tests/basics.yaml, transcripts/\n"), "\(made.output)")
        let bot = dir.appendingPathComponent("bots/airline")
        for file in ["bot.yaml", "rules.yaml", "tests/basics.yaml", "transcripts/example.jsonl", "transcripts/README.md"] {
            #expect(FileManager.default.fileExists(atPath: bot.appendingPathComponent(file).path), "\(file)")
        }
        let botYAML = try String(contentsOf: bot.appendingPathComponent("bot.yaml"), encoding: .utf8)
        let rulesYAML = try String(contentsOf: bot.appendingPathComponent("rules.yaml"), encoding: .utf8)
        #expect(botYAML.hasPrefix("# yaml-language-server: $schema=../../schema/bot.schema.json\n"))
        #expect(rulesYAML.hasPrefix("# yaml-language-server: $schema=../../schema/rules.schema.json\n"))
        #expect(botYAML.contains("\nbot: airline\n") && botYAML.contains("\nname: Sky Air\n") && botYAML.contains("\ntimezone: Europe/Madrid\n"))

        let check = try runUsher(["check", "--strict", "bots/airline"], stdout: true, in: dir)
        #expect(check.status == 0 && check.output.hasSuffix("checked 1 target: no problems\n"), "\(check.output)")
        let test = try runUsher(["test", "bots/airline"], stdout: true, in: dir)
        #expect(test.status == 0 && test.output == "5 passed, 0 failed\n", "\(test.output)")
        let replay = try runUsher(["replay", "bots/airline", "bots/airline/transcripts/example.jsonl", "--summary-only"], stdout: true, in: dir)
        #expect(replay.status == 0 && replay.output.contains("conversations             2   from 1 transcript"), "\(replay.output)")
    }

    /// Outside a project with schema/, the schemas are written beside the bot.
    @Test func withoutASchemaFolderTheSchemasComeAlong() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try runUsher(["new", "helpdesk", "--timezone", "UTC"], stdout: true, in: dir)
        #expect(made.status == 0, "\(made.output)")
        let bot = dir.appendingPathComponent("helpdesk")
        let rulesYAML = try String(contentsOf: bot.appendingPathComponent("rules.yaml"), encoding: .utf8)
        #expect(rulesYAML.hasPrefix("# yaml-language-server: $schema=schema/rules.schema.json\n"))
        #expect(FileManager.default.fileExists(atPath: bot.appendingPathComponent("schema/rules.schema.json").path))
        #expect(try runUsher(["check", "--strict", "helpdesk"], stdout: true, in: dir).status == 0)
        #expect(try runUsher(["test", "helpdesk"], stdout: true, in: dir).output == "5 passed, 0 failed\n")
    }

    @Test func mistakesAreSaidInOneLine() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("taken"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: dir.appendingPathComponent("taken/notes.txt"))
        let cases: [([String], Int32, String)] = [
            (["new", "taken"], 1, "usher new: taken already exists and is not empty; choose a new folder, or remove it first\n"),
            (["new", "bots/Air Line"], 64, "usher new: 'Air Line' cannot be a bot id; name the folder with lowercase letters, digits and '-', like bots/airline (see usher new --help)\n"),
            (["new", "air", "--timezone", "Madrid"], 64, "usher new: --timezone: unknown time zone 'Madrid'; did you mean 'Europe/Madrid'? (see usher new --help)\n"),
        ]
        for (args, status, message) in cases {
            let r = try runUsher(args, stdout: true, in: dir)
            #expect(r.status == status && r.output == message, "\(args): \(r.status) \(r.output)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["taken"], "nothing else is written")
    }
}
