public import Foundation
public import UsherRuntime

/// The bot of the worker tests and benchmarks: three canned replies, then a handoff on the fourth
/// customer message (`rules`), or one reply to every message (`oneReply`).
public enum TestBot {
    public static let rules = """
    version: 1
    rules:
      - id: opening
        when: {customer_messages: {at_most: 3}}
        then: [reply: {sequence: ["one", "two", "three"]}]
      - id: threshold
        when: {customer_messages: {at_least: 4}}
        then: [handoff: {reason: threshold}]
    """

    /// A bot that answers every customer message with one reply: the transaction shape of
    /// `usher-store-bench` (a state, a reply, a done mark per message).
    public static let oneReply = """
    version: 1
    rules:
      - id: opening
        when: {customer_messages: {at_least: 1}}
        then: [reply: "Thanks for reaching out—we're here to help."]
    """

    /// The bot (id `bench`) written into a new temporary folder, and that folder (the caller
    /// removes it).
    public static func make(prefix: String, rules: String = rules) throws -> (dir: URL, bot: BotRuntime) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("bot"), withIntermediateDirectories: true)
        try Data("bot: bench\nrules: [rules.yaml]\n".utf8).write(to: dir.appendingPathComponent("bot/bot.yaml"))
        try Data(rules.utf8).write(to: dir.appendingPathComponent("bot/rules.yaml"))
        return (dir, try BotRuntime(path: dir.appendingPathComponent("bot").path))
    }
}

/// A bot folder (bot id `temp`) in a temporary directory, so tests can break and fix its files.
public func temporaryBot(_ rules: String) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("usher-bot-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try Data("bot: temp\nname: Temp\nrules: [rules.yaml]\n".utf8).write(to: dir.appendingPathComponent("bot.yaml"))
    try Data(rules.utf8).write(to: dir.appendingPathComponent("rules.yaml"))
    return dir
}
