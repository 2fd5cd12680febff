import Foundation
import Testing
import UsherRuntime
import UsherStoreTestKit
import UsherTestSupport

@Suite struct MetricsTests {
    @Test func rulesInfoHasOneSeriesPerBot() {
        let m = Metrics()
        m.set("usher_rules_info", ["bot": "support", "version": "v1"], to: 1)
        m.set("usher_rules_info", ["bot": "tienda", "version": "t1"], to: 1)
        for version in ["v2", "v3", "v4"] { m.set("usher_rules_info", ["bot": "support", "version": version], to: 1) }
        let lines = m.render().split(separator: "\n").filter { $0.hasPrefix("usher_rules_info{") }
        #expect(lines == [#"usher_rules_info{bot="support",version="v4"} 1"#, #"usher_rules_info{bot="tienda",version="t1"} 1"#])
        #expect(m.value("usher_rules_info", ["bot": "support", "version": "v1"]) == nil)
    }

    /// Four reloads, as the defect was found: only the live version reads 1.
    @Test func aReloadReplacesTheRunningVersion() throws {
        let dir = try temporaryBot(TestBot.rules)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bot = try BotRuntime(path: dir.path)
        let metrics = Metrics()
        let worker = Worker(store: InMemoryStore(), bots: [bot], metrics: metrics, log: Logger(minimum: .error))
        var versions = [bot.ruleSet.version]
        for round in 1...4 {
            try Data((TestBot.rules + "\n# round \(round)\n").utf8).write(to: dir.appendingPathComponent("rules.yaml"))
            worker.reload(force: true)
            versions.append(bot.ruleSet.version)
        }
        #expect(Set(versions).count == 5)
        let lines = metrics.render().split(separator: "\n").filter { $0.hasPrefix("usher_rules_info{") }
        #expect(lines == ["usher_rules_info{bot=\"temp\",version=\"\(versions.last!)\"} 1"])
    }
}
