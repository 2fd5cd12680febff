import Foundation
import Testing
import UsherEngine
import UsherStore
import UsherStoreTestKit
@testable import UsherSQLite

/// A temporary directory, removed when the test's scope ends.
final class TempDir: Sendable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("usher-sqlite-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String = "store.db") -> String { url.appendingPathComponent(name).path }
}

enum Fixture {
    static let bot = BotIdentity(id: "b", name: "Bot", senderID: "bot:b")
    static let t0 = Date(timeIntervalSince1970: 1_764_468_000)

    static func customer(_ conv: String, _ text: String, id: String = UUID().uuidString.lowercased(),
                         at: Date = t0) -> NewMessage {
        NewMessage(id: id, conversationID: conv, from: .customer, senderID: "u-\(conv)", senderName: "Pooja", text: text, at: at)
    }

    /// The commit a worker would make for `m`: one reply (and a handoff when asked), version + 1.
    static func commit(_ m: StoredMessage, after old: ConversationState?, reply: String? = "ok", handoff: Bool = false,
                       expected: Int? = nil) -> Commit {
        ConformanceSuite.sampleCommit(m, after: old, reply: reply, handoff: handoff, expected: expected, bot: bot)
    }

    /// Reads the state, builds the commit, commits.
    @discardableResult
    static func decideAndCommit(_ store: any ChatStore, _ m: StoredMessage, reply: String? = "ok",
                                handoff: Bool = false) async throws -> CommitResult {
        let old = try await store.state(bot: bot.id, conversation: m.conversationID)
        return try await store.commit(commit(m, after: old, reply: reply, handoff: handoff))
    }
}

/// The `sqlite3` command-line shell, when installed (crash tests use it as a second process).
let sqlite3CLI: String? = ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/bin/sqlite3"]
    .first { FileManager.default.isExecutableFile(atPath: $0) }
