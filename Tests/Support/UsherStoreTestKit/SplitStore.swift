public import Foundation
import Synchronization
public import UsherEngine
public import UsherStore

/// A store that sends each call to the next of several stores in turn — for running the
/// conformance kit across several connections to one database.
public final class SplitStore: SharedStore, NotificationStore, BackendStore {
    public typealias Member = any SharedStore & NotificationStore & BackendStore
    public let stores: [Member]
    private let next = Atomic<Int>(0)

    public init(_ stores: [Member]) { self.stores = stores }

    private var any: Member { stores[next.add(1, ordering: .relaxed).oldValue % stores.count] }

    public func pending(bot: String, after cursor: Int64, limit: Int) async throws -> [StoredMessage] {
        try await any.pending(bot: bot, after: cursor, limit: limit)
    }
    public func waitForChanges(after seq: Int64, timeout: Duration) async throws {
        try await any.waitForChanges(after: seq, timeout: timeout)
    }
    public func cursor(bot: String) async throws -> Int64 { try await any.cursor(bot: bot) }
    public func advanceCursor(bot: String) async throws { try await any.advanceCursor(bot: bot) }
    public func states(bot: String, conversations: [String]) async throws -> [String: ConversationState] {
        try await any.states(bot: bot, conversations: conversations)
    }
    public func commit(batch: [Commit]) async throws -> [CommitResult] { try await any.commit(batch: batch) }
    public func claim(bot: String, conversations: [String], worker: String, until: Date) async throws -> Set<String> {
        try await any.claim(bot: bot, conversations: conversations, worker: worker, until: until)
    }
    public func claimPending(bot: String, after cursor: Int64, limit: Int, worker: String, until: Date,
                             skipping: [String: Int64], share: Share, holds: @Sendable (String) -> Bool) async throws -> Intake {
        try await any.claimPending(bot: bot, after: cursor, limit: limit, worker: worker, until: until, skipping: skipping,
                                   share: share, holds: holds)
    }
    public func members(group: String, worker: String, until: Date) async throws -> [String] {
        try await any.members(group: group, worker: worker, until: until)
    }
    public func progress(bot: String, worker: String, share: Share, safe: Int64?) async throws {
        try await any.progress(bot: bot, worker: worker, share: share, safe: safe)
    }
    public func release(bot: String, worker: String, keeping: Set<String>) async throws {
        try await any.release(bot: bot, worker: worker, keeping: keeping)
    }
    public func append(_ message: NewMessage) async throws -> StoredMessage { try await any.append(message) }
    public func transcript(conversation: String) async throws -> [StoredMessage] { try await any.transcript(conversation: conversation) }
    public func inbox(bot: String) async throws -> [InboxEntry] { try await any.inbox(bot: bot) }
    public func notifications(after seq: Int64, limit: Int) async throws -> [StoredNotification] {
        try await any.notifications(after: seq, limit: limit)
    }
    public func latestSeq() async throws -> Int64 { try await any.latestSeq() }
    public func lastNotificationSeq() async throws -> Int64 { try await any.lastNotificationSeq() }
    public func conversation(_ id: String) async throws -> ConversationInfo? { try await any.conversation(id) }
    public func close() async throws { for s in stores { try await s.close() } }
}
