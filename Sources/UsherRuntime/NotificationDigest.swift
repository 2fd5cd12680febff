public import Foundation
public import UsherStore

/// Agent notifications as agents receive them (DESIGN.md §9): in order, with bursts in a queue
/// merged — "3 conversations are waiting in general" instead of three pings — and muted queues
/// left out. The server side of the seed's in-app notification queue ("A, B and 3 others").
public struct NotificationDigest: Sendable, Hashable {
    public var queue: String
    public var text: String
    /// The notifications merged into this one, in order.
    public var conversations: [String]
    /// The last notification's sequence number: delivery resumes after it.
    public var through: Int64
    public var at: Date

    /// Merges `notifications` (in store order): consecutive notifications of one queue whose
    /// times lie within `window` of the burst's first become one digest. Muted queues are
    /// dropped. Each burst is digested once, when it is complete.
    public static func merge(_ notifications: [StoredNotification], window: TimeInterval,
                             muted: Set<String> = []) -> [NotificationDigest] {
        var bursts: [[StoredNotification]] = []
        var open: [String: Int] = [:]            // queue → index in `bursts` of its open burst
        for n in notifications where !muted.contains(n.notification.queue) {
            let q = n.notification.queue
            if let i = open[q], n.notification.at.timeIntervalSince(bursts[i][0].notification.at) <= window {
                bursts[i].append(n)
            } else {
                open[q] = bursts.count
                bursts.append([n])
            }
        }
        return bursts.map(digest)
    }

    static func digest(_ burst: [StoredNotification]) -> NotificationDigest {
        let first = burst[0].notification
        let names = burst.map { $0.notification.customerName ?? $0.notification.conversationID }
        let text: String
        if burst.count == 1 {
            text = first.text
        } else {
            let handoffs = burst.filter(\.notification.isHandoff).count
            let shown = names.prefix(2).joined(separator: ", ")
            let others = burst.count - min(2, names.count)
            let who = others > 0 ? "\(shown) and \(others) other\(others == 1 ? "" : "s")" : names.joined(separator: " and ")
            text = handoffs == burst.count
                ? "\(burst.count) conversations are waiting in \(first.queue): \(who)"
                : "\(burst.count) notifications in \(first.queue): \(who)"
        }
        return NotificationDigest(queue: first.queue, text: text, conversations: burst.map(\.notification.conversationID),
                                  through: burst.last!.seq, at: burst.last!.notification.at)
    }
}
