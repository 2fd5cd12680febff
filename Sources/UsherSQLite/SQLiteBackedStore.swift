public import Foundation
public import UsherEngine
public import UsherStore

/// A store that is the embedded SQLite store plus a way in and out of its own — JSON lines on
/// stdin and stdout (`StdioStore`), HTTP (the webhook): every capability of the SQLite store,
/// handed to `database`. A conforming type writes only what it adds (its commit, which then
/// writes its actions out; its `close`).
public protocol SQLiteBackedStore: SharedStore, SignallingStore, NotificationStore, BackendStore {
    /// The embedded store underneath.
    var database: SQLiteStore { get }
}

extension SQLiteBackedStore {
    public func pending(bot: String, after cursor: Int64, limit: Int) async throws -> [StoredMessage] {
        try await database.pending(bot: bot, after: cursor, limit: limit)
    }

    public func waitForChanges(after seq: Int64, timeout: Duration) async throws {
        try await database.waitForChanges(after: seq, timeout: timeout)
    }

    public var changeSignal: ChangeSignal? { database.changeSignal }

    public func cursor(bot: String) async throws -> Int64 { try await database.cursor(bot: bot) }

    public func advanceCursor(bot: String) async throws { try await database.advanceCursor(bot: bot) }

    public func state(bot: String, conversation: String) async throws -> ConversationState? {
        try await database.state(bot: bot, conversation: conversation)
    }

    public func states(bot: String, conversations: [String]) async throws -> [String: ConversationState] {
        try await database.states(bot: bot, conversations: conversations)
    }

    public func claim(bot: String, conversations: [String], worker: String, until: Date) async throws -> Set<String> {
        try await database.claim(bot: bot, conversations: conversations, worker: worker, until: until)
    }

    public func release(bot: String, worker: String, keeping: Set<String>) async throws {
        try await database.release(bot: bot, worker: worker, keeping: keeping)
    }

    @discardableResult
    public func append(_ message: NewMessage) async throws -> StoredMessage { try await database.append(message) }

    public func transcript(conversation: String) async throws -> [StoredMessage] {
        try await database.transcript(conversation: conversation)
    }

    public func inbox(bot: String) async throws -> [InboxEntry] { try await database.inbox(bot: bot) }

    public func notifications(after seq: Int64, limit: Int) async throws -> [StoredNotification] {
        try await database.notifications(after: seq, limit: limit)
    }

    public func lastNotificationSeq() async throws -> Int64 { try await database.lastNotificationSeq() }

    public func latestSeq() async throws -> Int64 { try await database.latestSeq() }

    public func conversation(_ id: String) async throws -> ConversationInfo? { try await database.conversation(id) }
}
