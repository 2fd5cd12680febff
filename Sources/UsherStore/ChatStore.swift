import Foundation
public import UsherEngine

/// The store contract every adapter implements (DESIGN.md §7): what the worker needs to answer
/// a bot's messages, and nothing else. A store that implements these seven and passes the
/// conformance kit (`UsherStoreTestKit`) runs the worker; everything else a store can do is a
/// capability protocol beside this one (`SequencedStore`, `SharedStore`, `SignallingStore`,
/// `TunableStore`, `NotificationStore`, `BackendStore`), each optional.
///
/// - Intake: inbound messages (customer and agent messages, close events) not yet done for a
///   bot, after a durable position, oldest first (so each conversation in order); at least once.
/// - State: per conversation and bot, with compare-and-set on `ConversationState.version`.
/// - Commit: each inbound message's effects written atomically and exactly once
///   (`CommitResult`), its conversation's earlier messages first (`.outOfOrder`), and no reply
///   written after a human took the conversation over (`.silenced`).
public protocol ChatStore: Sendable {
    /// The bot's durable position: every inbound message at or before it is done. `.start`
    /// before the first move.
    func position(bot: String) async throws -> StorePosition

    /// Inbound messages after `position` that `bot` has not done yet, oldest first, at most
    /// `limit`, and where the next read goes on (`Page.end`).
    func pending(bot: String, after position: StorePosition, limit: Int) async throws -> Page

    /// The states of `conversations` for `bot`; a conversation without one (no message decided
    /// yet) is absent.
    func states(bot: String, conversations: [String]) async throws -> [String: ConversationState]

    /// Writes each commit in order, each atomically, and returns one result per commit (see
    /// `CommitResult`): a later commit sees the effects of earlier ones in the batch; one that was
    /// not written does not undo the others, but its conversation's later commits in the batch
    /// are not written either (`BatchLinks`). The same commit again is `.duplicate`.
    func commit(batch: [Commit]) async throws -> [CommitResult]

    /// Records that every inbound message of `bot` at or before `position` is done (the worker
    /// calls it only then); the position never moves back. A store that finds the done messages
    /// itself may move further, never past a message not done.
    func move(bot: String, to position: StorePosition) async throws

    /// Returns when messages after `position` may have arrived, or after `timeout` (a store
    /// without a change signal sleeps it, or polls).
    func waitForChanges(after position: StorePosition, timeout: Duration) async throws

    /// Ends the store's connections; further calls fail.
    func close() async throws
}

extension ChatStore {
    /// One commit alone: `commit(batch:)` of one.
    public func commit(_ commit: Commit) async throws -> CommitResult {
        try await self.commit(batch: [commit])[0]
    }

    /// One conversation's state (nil before its first decided message).
    public func state(bot: String, conversation: String) async throws -> ConversationState? {
        try await states(bot: bot, conversations: [conversation])[conversation]
    }
}

/// A store's place in its stream of inbound messages, opaque to everyone but the store: a
/// global sequence number for SQLite and PostgreSQL (`seq`), a timestamp and document name for
/// Firestore, a queue offset for a webhook intake.
public struct StorePosition: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The store's own encoding; empty: before everything.
    public var token: String

    public init(_ token: String) { self.token = token }

    /// Before the first message.
    public static let start = StorePosition("")

    /// A sequenced store's position: the `seq` of the last message passed.
    public init(seq: Int64) { token = seq == 0 ? "" : String(seq) }

    /// The position as a sequence number (`.start` is 0), for stores whose positions are (see
    /// `SequencedStore`); nil for a token that is not one.
    public var seq: Int64? { token.isEmpty ? 0 : Int64(token) }

    public var description: String { token.isEmpty ? "start" : token }
}

/// What `ChatStore.pending` returns: messages, and where the next read goes on.
public struct Page: Sendable {
    /// Inbound messages not done yet, oldest first.
    public var messages: [StoredMessage]
    /// Every inbound message up to here was returned (by this read or one before it) or is
    /// done: the next read starts after it. Never before the position the read started from.
    public var end: StorePosition

    public init(messages: [StoredMessage], end: StorePosition) {
        self.messages = messages
        self.end = end
    }
}

/// A store operation that failed for a reason outside the contract (I/O, a lost connection).
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var code: String
    public var message: String
    /// Whether trying again later may succeed (busy, connection lost).
    public var isTransient: Bool
    /// The store's server is not there yet (refused, no socket, starting up, host not found):
    /// waiting mends it. `usher run` waits and tries again; other commands exit 69.
    public var isUnavailable: Bool
    public init(_ code: String, _ message: String, transient: Bool = false, unavailable: Bool = false) {
        self.code = code
        self.message = message
        self.isTransient = transient || unavailable
        self.isUnavailable = unavailable
    }
    public var description: String { "\(code): \(message)" }
}
