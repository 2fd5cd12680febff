import Foundation
import Synchronization
import Testing
import UsherRuntime
import UsherStoreTestKit
import UsherTestSupport

/// What a running bot says about the rules it loads: their warnings go to the log at start and
/// with every reload that swaps new rules in.
@Suite struct BotRuntimeTests {
    final class Lines: Sendable {
        let all = Mutex<[String]>([])
        var logger: Logger { Logger(sink: { line in self.all.withLock { $0.append(line) } }) }
        func events(_ name: String) -> [String] { all.withLock { $0 }.filter { $0.contains(" event=\(name) ") } }
    }

    static func rules(regexes: [String]) -> String {
        TestBot.rules + regexes.enumerated().map { i, r in
            "\n  - id: r\(i)\n    when: {regex: '\(r)'}\n    then: [reply: \"r\(i)\"]"
        }.joined() + "\n"
    }

    @Test func aReloadThatBringsCatastrophicRegexesLogsThem() throws {
        let dir = try temporaryBot(TestBot.rules)
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = Lines()
        let bot = try BotRuntime(path: dir.path, log: lines.logger)
        #expect(lines.events("rules-warning").isEmpty && bot.warnings.isEmpty)
        // Through the worker's reload, as the file watch and SIGHUP run it.
        let worker = Worker(store: InMemoryStore(), bots: [bot], log: Logger(minimum: .error))
        try Data(Self.rules(regexes: ["^(a|aa)+b", "(.*a){12}x"]).utf8).write(to: dir.appendingPathComponent("rules.yaml"))
        worker.reload(force: true)
        let warned = lines.events("rules-warning")
        #expect(warned.count == 2, "\(warned)")
        #expect(warned.allSatisfy { $0.contains("level=warn") && $0.contains("bot=temp") && $0.contains("code=catastrophic-regex")
            && $0.contains("version=\(bot.ruleSet.version)") })
        #expect(warned[0].contains("at=\(dir.path)/rules.yaml:10:19 "), "\(warned[0])")
        #expect(warned[1].contains("like (.*a){12}"), "\(warned[1])")
        #expect(bot.warnings.map(\.code) == ["catastrophic-regex", "catastrophic-regex"])
        // An unchanged reload says nothing again.
        worker.reload(force: true)
        #expect(lines.events("rules-warning").count == 2)
    }

    @Test func warningsAreLoggedAtStartAndCapped() throws {
        let dir = try temporaryBot(Self.rules(regexes: (0..<25).map { "(a+)+\($0)$" }))
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = Lines()
        let bot = try BotRuntime(path: dir.path, log: lines.logger)
        #expect(bot.warnings.count == 25)
        #expect(lines.events("rules-warning").count == 20)
        let more = lines.events("rules-warnings-more")
        #expect(more.count == 1 && more[0].contains("count=5 "), "\(more)")
        // Without a logger a bot says nothing (the tests' and benchmarks' bots).
        _ = try BotRuntime(path: dir.path)
        #expect(lines.events("rules-warning").count == 20)
    }
}
