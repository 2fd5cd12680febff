import Foundation
import Testing

/// `usher inbox` with several bots on one store: every bot's waiting conversations by default.
@Suite("usher inbox")
struct InboxProcessTests {
    @Test func listsEveryBotsHandoffsWithABotColumn() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-inbox-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        // Two bots on one store, each answering its own channel, each handing off at once.
        for (bot, channel) in [("sales", "web"), ("billing", "sms")] {
            let folder = dir.appendingPathComponent("bots/\(bot)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("bot: \(bot)\nrules: [rules.yaml]\nchannels: [\(channel)]\n".utf8).write(to: folder.appendingPathComponent("bot.yaml"))
            try Data("version: 1\nrules:\n  - id: human\n    then: [handoff: {reason: \(bot)-desk}]\n".utf8)
                .write(to: folder.appendingPathComponent("rules.yaml"))
        }
        let store = "sqlite:" + dir.appendingPathComponent("usher.db").path
        for (bot, channel) in [("sales", "web"), ("billing", "sms")] {
            let chat = try ChatProcess(["bots/\(bot)", "--store", store, "--conversation", "c-\(bot)", "--channel", channel, "--name", "Ana"],
                                       in: dir)
            try await chat.type("hello", prompts: 2)
            #expect(chat.text.contains("(handed off (\(bot)-desk): the conversation waits for an agent"), "\(chat.text)")
            #expect(chat.quit() == 0)
        }

        let all = try runUsher(["inbox", "--store", store], stdout: true, in: dir)
        #expect(all.status == 0, "\(all.output)")
        let lines = all.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("WAITING  BOT      CONVERSATION  QUEUE    REASON        CUSTOMER  LAST MESSAGE") == true, "\(all.output)")
        // Oldest first: sales handed off before billing.
        #expect(lines.dropFirst().first?.contains(" sales    c-sales       general  sales-desk    Ana       hello") == true, "\(all.output)")
        #expect(lines.dropFirst(2).first?.contains(" billing  c-billing     general  billing-desk  Ana       hello") == true, "\(all.output)")
        #expect(lines.last == "2 waiting")

        let one = try runUsher(["inbox", "--store", store, "--bot", "billing", "--format", "json"], stdout: true, in: dir)
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(one.output.utf8)) as? [[String: Any]], "\(one.output)")
        #expect(rows.map { $0["bot"] as? String } == ["billing"] && rows.map { $0["conversation"] as? String } == ["c-billing"])
    }
}
