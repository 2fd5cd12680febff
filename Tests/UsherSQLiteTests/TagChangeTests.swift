import Foundation
import Testing
import UsherEngine
import UsherStore
@testable import UsherSQLite

/// What a decision's `tag` and `untag` actions changed: carried by the commit, recorded by the
/// SQLite store, and moved into a channel's outbox once (Chatwoot's labels).
@Suite("SQLite store: tag changes")
struct TagChangeTests {
    @Test func aCommitCarriesTheNetChangeOfItsTagActions() {
        var state = ConversationState(conversationID: "c")
        state.tags = ["vip", "y"]
        let m = StoredMessage(seq: 1, id: "m1", conversationID: "c", from: .customer, text: "hi", at: Fixture.t0)
        let decision = Decision(outcome: .fired(["r"]), effects: [.tag("vip"), .untag("new"), .tag("x"), .untag("x"), .untag("y"), .tag("y")],
                                state: state, ruleSetVersion: "v1")
        let c = Commit(bot: Fixture.bot, inbound: m, expectedVersion: 0, decision: decision, at: Fixture.t0)
        #expect(c.tagsAdded == ["vip", "y"])
        #expect(c.tagsRemoved == ["new", "x"])
        let quiet = Commit(bot: Fixture.bot, inbound: m, expectedVersion: 0,
                           decision: Decision(outcome: .fired(["r"]), effects: [.reply(text: "ok", rule: "r")], state: state, ruleSetVersion: "v1"),
                           at: Fixture.t0)
        #expect(quiet.tagsAdded.isEmpty && quiet.tagsRemoved.isEmpty)
    }

    @Test func tagChangesMoveIntoTheOutboxOnceInTheirChunk() async throws {
        let dir = TempDir()
        let store = try await SQLiteStore(path: dir.path())
        defer { Task { try? await store.close() } }
        try await store.prepareOutbox()
        let m1 = try await store.append(Fixture.customer("c", "one"))
        var tagged = Fixture.commit(m1, after: nil)
        tagged.tagsAdded = ["vip"]
        tagged.tagsRemoved = ["new"]
        #expect(try await store.commit(tagged) == .committed)
        let m2 = try await store.append(Fixture.customer("c", "two"))
        #expect(try await Fixture.decideAndCommit(store, m2) == .committed)

        let fill: @Sendable () async throws -> Int = {
            try await store.fillOutbox(channel: "test", tags: true) { actions in
                actions.map { action in
                    guard case let .tags(change) = action else { return OutboxItem(key: action.idempotencyKey, conversation: "c", call: "a") }
                    return OutboxItem(key: change.idempotencyKey, conversation: change.conversationID,
                                      call: "+\(change.added.joined(separator: ","))-\(change.removed.joined(separator: ","))")
                }
            }
        }
        #expect(try await fill() == 3, "two replies, one tag change")
        #expect(try await fill() == 0, "each once")
        let due = try await store.dueOutbox(channel: "test", now: Date().addingTimeInterval(60), limit: 10).due
        #expect(due.count == 1, "one conversation: its oldest call first")
        var keys: [String] = []
        var calls: [String] = []
        while let next = try await store.dueOutbox(channel: "test", now: Date().addingTimeInterval(60), limit: 1).due.first {
            keys.append(next.item.key)
            calls.append(next.item.call)
            try await store.outboxDelivered(id: next.id)
        }
        #expect(keys == ["b:\(m1.id):0", "b:\(m2.id):0", "b:\(m1.id):tags"])
        #expect(calls.last == "+vip-new")
        #expect(try await store.lastOutboxID(channel: "test") == 0, "the outbox is empty")

        // A channel that does not mirror tags leaves their stream alone.
        #expect(try await store.fillOutbox(channel: "other") { $0.map { OutboxItem(key: $0.idempotencyKey, conversation: "c", call: "a") } } == 2)
        #expect(try await store.deliveryMarks(channel: "other")["tags"] == nil)
    }
}
