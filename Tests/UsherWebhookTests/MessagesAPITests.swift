import Foundation
import Testing
import UsherEngine
import UsherRuntime
import UsherSQLite
import UsherStore
@testable import UsherWebhook

@Suite("Webhook messages API")
struct MessagesAPITests {
    let api = MessagesAPI(signer: nil, maxMessages: 3)
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func decode(_ body: String) throws(IntakeError) -> [NewMessage] {
        try api.messages(in: HTTPServer.Request(method: "POST", path: "/v1/messages", body: Array(body.utf8)), now: now)
    }

    func error(_ body: String) -> IntakeError? {
        do {
            _ = try decode(body)
            return nil
        } catch {
            return error
        }
    }

    @Test func oneMessageOrAnArrayInTheTranscriptLineFormat() throws {
        let one = try decode(#"{"conversation":"c1","id":"m1","from":"customer","sender_name":"Pooja","text":"hi","at":"2026-11-30T02:00:00Z","channel":"web","locale":"en"}"#)
        #expect(one == [NewMessage(id: "m1", conversationID: "c1", from: .customer, senderName: "Pooja", text: "hi",
                                   at: ISO8601DateFormatter().date(from: "2026-11-30T02:00:00Z")!, channel: "web", locale: "en")])
        let many = try decode(#"[{"conversation":"c1","id":"m2","text":"a"},{"conversation":"c1","id":"m3","from":"agent","text":"b"},{"conversation":"c1","id":"m4","event":"close"}]"#)
        #expect(many.map(\.id) == ["m2", "m3", "m4"])
        #expect(many.map(\.from) == [.customer, .agent, .system])
        #expect(many[2].kind == .close)
        #expect(many[0].at == now, "no time: now")
    }

    @Test(arguments: [
        (#"{"conversation":"c1","text":"no id"}"#, 400, "id"),
        (#"{"id":"m1","text":"hi"}"#, 400, "conversation"),
        (#"{"conversation":"c1","id":"m1"}"#, 400, "text"),
        (#"{"conversation":"c1","id":"m1","text":"hi","from":"robot"}"#, 400, "from"),
        (#"{"conversation":"c1","id":"m1","text":"hi","at":"yesterday"}"#, 400, "at"),
        (#"[{"conversation":"c1","id":"m1","text":"a"},{"conversation":"c1","id":"m2","text":"b","from":7}]"#, 400, "messages[1].from"),
        (#"[{"conversation":"c1","id":"m1","text":"a"}, "text"]"#, 400, "messages[1]"),
        (#"[]"#, 400, "body"),
        (#""hello""#, 400, "body"),
        (#"[{},{},{},{}]"#, 413, "body"),
        (#"{"conversation":"c1","id":"m1","text":"hi","text":"again"}"#, 400, "body"),
    ])
    func aBadMessageNamesItsField(_ body: String, _ status: Int, _ field: String) {
        let e = error(body)
        #expect(e?.status == status, Comment(rawValue: e?.message ?? "accepted"))
        #expect(e?.field == field, Comment(rawValue: e?.message ?? "accepted"))
    }

    @Test func malformedJSONSaysWhereByLineAndColumn() {
        let e = error("[{\"conversation\":\"c1\",\n  \"id\":\"m1\" \"text\":\"hi\"}]")
        #expect(e?.code == "bad-json")
        #expect(e?.message.hasPrefix("invalid JSON at line 2, column 13:") == true, Comment(rawValue: e?.message ?? ""))
        let invalid = api.messages(in: HTTPServer.Request(method: "POST", path: "/", body: [0x7B, 0xFF, 0x7D]), now: now, orError: true)
        #expect(invalid?.message == "the body is not valid UTF-8")
    }

    /// A reply's buttons and links are in the body POSTed for it, as the stdio line has them.
    @Test func aReplyCallCarriesItsQuickReplies() throws {
        let reply = StoreAction.message(StoredMessage(
            seq: 3, id: "s:m1:0", conversationID: "c1", from: .bot, senderID: "bot:s", text: "Anything else?",
            at: Date(timeIntervalSince1970: 0), ruleID: "help",
            quickReplies: [QuickReply(title: "Track my order"), QuickReply(title: "Returns", url: "https://shop.example/returns")]))
        let call = try #require(api.calls(for: [reply]).first)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(call.body.utf8)) as? [String: Any])
        let items = try #require(body["quick_replies"] as? [[String: String]])
        #expect(items == [["title": "Track my order"], ["title": "Returns", "url": "https://shop.example/returns"]])
        #expect(body["text"] as? String == "Anything else?" && call.key == "s:m1:0")
    }

    /// A chunk as the store hands it (replies and notices, then handoffs, then notifications)
    /// goes out as committed: each inbound message's actions together.
    @Test func actionsGoOutInCommitOrder() {
        let at = Date(timeIntervalSince1970: 0)
        func message(_ seq: Int64, _ key: String, _ from: SenderRole) -> StoreAction {
            .message(StoredMessage(seq: seq, id: key, conversationID: "c1", from: from, text: key, at: at))
        }
        let handoff = StoreAction.handoff(HandoffRecord(id: 1, bot: "s", conversationID: "c1", idempotencyKey: "s:m4:handoff", messageID: "m4",
                                                        queue: "general", reason: "threshold", customerName: nil, ruleID: nil, waitingSince: at))
        let note = StoreAction.notification(StoredNotification(seq: 1, bot: "s", notification: AgentNotification(
            idempotencyKey: "s:m4:2", conversationID: "c1", queue: "general", reason: "threshold", text: "", customerName: nil,
            lastMessage: "", isHandoff: true, at: at)))
        let chunk = [message(10, "s:m3:0", .bot), message(12, "s:m4:1", .system), message(14, "s:m5:0", .bot), handoff, note]
        #expect(MessagesAPI.inCommitOrder(chunk).map(\.idempotencyKey) == ["s:m3:0", "s:m4:1", "s:m4:handoff", "s:m4:2", "s:m5:0"])
    }
}

extension MessagesAPI {
    /// The error decoding a request gives, or nil.
    func messages(in request: HTTPServer.Request, now: Date, orError: Bool) -> IntakeError? {
        do {
            _ = try messages(in: request, now: now)
            return nil
        } catch {
            return error
        }
    }
}
