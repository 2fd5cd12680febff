import Foundation
import UsherJSON
public import UsherSQLite
import UsherStore
import UsherEngine

/// An action as one JSON line on stdout. Replies and notices are also transcript lines
/// (DESIGN.md §5): `conversation`, `id`, `at`, `from`, `sender_id`, `sender_name`, `text`.
///
///     {"type":"reply","key":"support:m-1:0","conversation":"c-42","id":"support:m-1:0","at":"…","from":"bot","sender_id":"bot:support","sender_name":"Support","rule":"opening","text":"Hi there!"}
///     {"type":"reply",…,"text":"Anything else?","quick_replies":[{"title":"Track my order"},{"title":"Returns","url":"https://shop.example/returns"}]}
///     {"type":"system","key":"support:m-4:1",…,"from":"system",…,"rule":"threshold","text":"We're connecting you…"}
///     {"type":"handoff","key":"support:m-4:handoff","conversation":"c-42","at":"…","bot":"support","message_id":"m-4","queue":"general","reason":"threshold","rule":"threshold","customer_name":"Pooja"}
///     {"type":"notification","key":"support:m-4:3","conversation":"c-42","at":"…","bot":"support","queue":"general","reason":"threshold","text":"…","customer_name":"Pooja","last_message":"…","handoff":true}
///
/// Absent values are left out rather than written as `null` (`quick_replies` too, when a reply
/// has none). The webhook POSTs the same objects, and one more kind, since its backend may keep
/// tags of its own (what a decision's `tag` and `untag` actions changed):
///
///     {"type":"tags","key":"support:m-2:tags","conversation":"c-42","at":"…","bot":"support","message_id":"m-2","added":["order"],"removed":[]}
public enum ActionLine {
    public static func encode(_ action: StoreAction) -> String {
        var w = JSONWriter(capacity: 256)
        w.byte(UInt8(ascii: "{"))
        switch action {
        case let .message(m):
            w.key("type", first: true); w.string(m.from == .system ? "system" : "reply")
            w.key("key"); w.string(m.id)
            w.key("conversation"); w.string(m.conversationID)
            w.key("id"); w.string(m.id)
            w.key("at"); w.string(time(m.at))
            w.key("from"); w.string(m.from.rawValue)
            if let v = m.senderID { w.key("sender_id"); w.string(v) }
            if let v = m.senderName { w.key("sender_name"); w.string(v) }
            if let v = m.ruleID { w.key("rule"); w.string(v) }
            w.key("text"); w.string(m.text)
            if !m.quickReplies.isEmpty { w.key("quick_replies"); QuickReply.write(m.quickReplies, into: &w) }
        case let .handoff(h):
            w.key("type", first: true); w.string("handoff")
            w.key("key"); w.string(h.idempotencyKey)
            w.key("conversation"); w.string(h.conversationID)
            w.key("at"); w.string(time(h.waitingSince))
            w.key("bot"); w.string(h.bot)
            w.key("message_id"); w.string(h.messageID)
            if let v = h.queue { w.key("queue"); w.string(v) }
            if let v = h.reason { w.key("reason"); w.string(v) }
            if let v = h.ruleID { w.key("rule"); w.string(v) }
            if let v = h.customerName { w.key("customer_name"); w.string(v) }
        case let .notification(stored):
            let n = stored.notification
            w.key("type", first: true); w.string("notification")
            w.key("key"); w.string(n.idempotencyKey)
            w.key("conversation"); w.string(n.conversationID)
            w.key("at"); w.string(time(n.at))
            w.key("bot"); w.string(stored.bot)
            w.key("queue"); w.string(n.queue)
            w.key("reason"); w.string(n.reason)
            w.key("text"); w.string(n.text)
            if let v = n.customerName { w.key("customer_name"); w.string(v) }
            w.key("last_message"); w.string(n.lastMessage)
            w.key("handoff"); w.bool(n.isHandoff)
        case let .tags(change):
            w.key("type", first: true); w.string("tags")
            w.key("key"); w.string(change.idempotencyKey)
            w.key("conversation"); w.string(change.conversationID)
            w.key("at"); w.string(time(change.at))
            w.key("bot"); w.string(change.bot)
            w.key("message_id"); w.string(change.messageID)
            w.key("added"); w.stringArray(change.added)
            w.key("removed"); w.stringArray(change.removed)
        }
        w.byte(UInt8(ascii: "}"))
        return w.text
    }

    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
