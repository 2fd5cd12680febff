import Foundation
import Testing
import UsherStore
import UsherTestSupport

/// A running `usher chat`: its standard input to type into, its output as it arrives.
final class ChatProcess: @unchecked Sendable {
    // @unchecked: `process` and `input` are used by the test's task only; the output is
    // behind its lock.
    let process = Process()
    private let input = Pipe()
    private let output = Locked(Data())
    private let drained = DispatchSemaphore(value: 0)

    init(_ args: [String], in directory: URL? = nil) throws {
        if let directory { process.currentDirectoryURL = directory }
        process.executableURL = try usherBinary()
        process.arguments = ["chat"] + args
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        process.environment = env
        let out = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let handle = out.fileHandleForReading
        Thread.detachNewThread { [output, drained] in
            while let chunk = try? readChunk(handle), !chunk.isEmpty { output.withLock { $0.append(chunk) } }
            drained.signal()
        }
    }

    var text: String { String(decoding: output.withLock { $0 }, as: UTF8.self) }

    /// Types `line`, then waits until the chat has printed `prompts` prompts in all (it
    /// prints the next one once every answer to this line is shown).
    func type(_ line: String, prompts: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
        try await eventually("the chat to answer \(line)", timeout: .seconds(60), detail: text, sourceLocation: sourceLocation) {
            text.components(separatedBy: "you> ").count - 1 >= prompts
        }
    }

    func quit() -> Int32 {
        input.fileHandleForWriting.write(Data("/quit\n".utf8))
        process.waitUntilExit()
        _ = drained.wait(timeout: .now() + 10)
        return process.terminationStatus
    }
}

/// `usher chat` as a person uses it: lines typed one after another, the answers read as they
/// come, the rules edited in between.
@Suite("usher chat")
struct ChatProcessTests {
    /// Edited rules are picked up before the next line, as `usher run` picks them up; broken
    /// ones are shown and the running rules stay; the loop guard names itself when it hands off,
    /// with the notice bot.yaml gives it.
    @Test func reloadsEditedRulesAndNamesTheLoopGuard() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-chat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let bot = dir.appendingPathComponent("bot")
        try FileManager.default.createDirectory(at: bot, withIntermediateDirectories: true)
        try Data("""
        bot: loop
        rules: [rules.yaml]
        limits:
          loop_guard: {replies: 3, within: 1h, message: "Let me get a person to help you."}

        """.utf8).write(to: bot.appendingPathComponent("bot.yaml"))
        let rules = bot.appendingPathComponent("rules.yaml")
        func write(_ reply: String) throws {
            try Data("version: 1\nrules:\n  - id: refund\n    when: {keywords: [refund]}\n    then: [reply: \"\(reply)\"]\n".utf8).write(to: rules)
        }
        try write("Refunds take five days.")

        let chat = try ChatProcess([bot.path, "--store", "sqlite:" + dir.appendingPathComponent("usher.db").path, "--conversation", "c-1"])
        try await chat.type("refund please", prompts: 2)
        #expect(chat.text.contains("loop: Refunds take five days.  [refund]"))

        try Data("version: 1\nrules:\n  - id: refund\n    when: {keywords: [refund]\n".utf8).write(to: rules)
        try await chat.type("refund?", prompts: 3)
        #expect(chat.text.contains("error: [yaml-syntax]"))
        #expect(chat.text.contains("(the edited rules have errors; still answering with version"))
        #expect(chat.text.components(separatedBy: "loop: Refunds take five days.").count - 1 == 2)

        try write("Refunds take three days.")
        try await chat.type("and my refund", prompts: 4)
        #expect(chat.text.contains("(rules reloaded: 1 rule, version"))
        #expect(chat.text.contains("loop: Refunds take three days.  [refund]"))

        try await chat.type("refund!!", prompts: 5)
        #expect(chat.text.components(separatedBy: "loop: Refunds take three days.").count - 1 == 1,
                "a fourth reply within the hour: the loop guard hands off instead")
        #expect(chat.text.contains("── Let me get a person to help you. ──"))
        #expect(chat.text.contains("(handed off by the loop guard: 3 replies within 1h: the conversation waits for an agent; see `usher inbox`)"))
        #expect(chat.quit() == 0)
    }

    /// A reply's buttons and links are shown under its text; a button's text typed back is
    /// the customer's next message.
    @Test func showsQuickRepliesUnderTheReply() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-chat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let bot = dir.appendingPathComponent("bot")
        try FileManager.default.createDirectory(at: bot, withIntermediateDirectories: true)
        try Data("bot: shop\nname: Shop\nrules: [rules.yaml]\n".utf8).write(to: bot.appendingPathComponent("bot.yaml"))
        try Data("""
        version: 1
        rules:
          - id: help
            when: {keywords: [help]}
            then:
              - reply:
                  text: "What can I do for you?"
                  quick_replies: [Track my order, {title: Returns, url: "https://shop.example/returns"}]
          - id: track
            when: {keywords: [track my order]}
            then: [reply: "Your order is on its way."]

        """.utf8).write(to: bot.appendingPathComponent("rules.yaml"))
        let chat = try ChatProcess([bot.path, "--store", "sqlite:" + dir.appendingPathComponent("usher.db").path, "--conversation", "c-1"])
        try await chat.type("help", prompts: 2)
        #expect(chat.text.contains("Shop: What can I do for you?  [help]\n      [Track my order] [Returns → https://shop.example/returns]\n"),
                "\(chat.text)")
        try await chat.type("Track my order", prompts: 3)
        #expect(chat.text.contains("Shop: Your order is on its way.  [track]\n"))
        #expect(chat.quit() == 0)
    }
}
