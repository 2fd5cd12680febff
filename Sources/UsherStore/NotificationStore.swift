import Foundation
import UsherEngine

/// A store that keeps the agent notifications commits raise (`Commit.notifications`), in order,
/// for the worker to deliver (`Worker.Options.deliver`, the log). Without it notifications are
/// written with the commits but not delivered by the worker.
public protocol NotificationStore: ChatStore {
    /// Notifications raised after `seq`, in order.
    func notifications(after seq: Int64, limit: Int) async throws -> [StoredNotification]

    /// The `seq` of the newest notification (0: none): where a worker starting up begins
    /// delivering. Stores answer it with one query; the default pages through them all.
    func lastNotificationSeq() async throws -> Int64
}

extension NotificationStore {
    public func lastNotificationSeq() async throws -> Int64 {
        var last: Int64 = 0
        while let seq = try await notifications(after: last, limit: 10_000).last?.seq { last = seq }
        return last
    }
}

/// A notification as stored, with its place in the notification order.
public struct StoredNotification: Sendable, Hashable, Codable {
    public var seq: Int64
    public var bot: String
    public var notification: AgentNotification
    public init(seq: Int64, bot: String, notification: AgentNotification) {
        self.seq = seq
        self.bot = bot
        self.notification = notification
    }
}

