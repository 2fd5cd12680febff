import Foundation

/// A store whose inbound messages carry one store-wide sequence number (`StoredMessage.seq`),
/// committed in order or with holes it can tell: SQLite and PostgreSQL. Its positions are
/// sequence numbers (`StorePosition(seq:)`), and the core contract comes for free from these.
public protocol SequencedStore: ChatStore {
    /// Inbound customer and agent messages and close events with `seq > cursor` that `bot` has
    /// not done yet, in `seq` order, at most `limit`.
    func pending(bot: String, after cursor: Int64, limit: Int) async throws -> [StoredMessage]

    /// The bot's durable cursor: every inbound message at or below it is done.
    func cursor(bot: String) async throws -> Int64

    /// Moves the cursor to just below the oldest inbound message `bot` has not done.
    func advanceCursor(bot: String) async throws

    /// The highest `seq` in the store, inbound or not (0 when empty). Read it before `pending`;
    /// when `pending` comes back empty, wait with `waitForChanges(after:)` from it, so that the
    /// bot's own replies (which also take sequence numbers) do not wake the wait at once.
    func latestSeq() async throws -> Int64

    /// Returns when messages after `seq` may have arrived, or after `timeout`.
    func waitForChanges(after seq: Int64, timeout: Duration) async throws
}

extension SequencedStore {
    public func position(bot: String) async throws -> StorePosition {
        StorePosition(seq: try await cursor(bot: bot))
    }

    public func pending(bot: String, after position: StorePosition, limit: Int) async throws -> Page {
        let from = try Self.seq(of: position)
        let messages: [StoredMessage] = try await pending(bot: bot, after: from, limit: limit)
        return Page(messages: messages, end: StorePosition(seq: messages.last?.seq ?? from))
    }

    /// The store finds the done messages itself (`advanceCursor`): the cursor moves to just
    /// below the oldest not done, which is past `position` when everything up to it is done.
    public func move(bot: String, to position: StorePosition) async throws {
        try await advanceCursor(bot: bot)
    }

    /// Waits after the store's newest sequence number when it is past `position`: the bot's
    /// own replies take sequence numbers too, and a wait after the last inbound message read
    /// would end at once on them. A message that came between the last read and this call is
    /// seen at the timeout at the latest (a shared store's loop closes that gap itself: it reads
    /// `latestSeq()` first, then reads again).
    public func waitForChanges(after position: StorePosition, timeout: Duration) async throws {
        let after = max(try Self.seq(of: position), try await latestSeq())
        try await waitForChanges(after: after, timeout: timeout)
    }

    static func seq(of position: StorePosition) throws -> Int64 {
        guard let seq = position.seq else {
            throw StoreError("bad-position", "'\(position.token)' is not a position of this store (a sequence number)")
        }
        return seq
    }
}
