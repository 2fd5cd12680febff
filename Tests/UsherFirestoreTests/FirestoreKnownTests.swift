import Foundation
import Testing
import UsherStore
import UsherStoreTestKit
@testable import UsherFirestore

/// A batch's commits check their conversations against what the intake read (`Known`), with one
/// query for what was written since the page — not one query per conversation.
@Suite("Firestore store: commits checked against the intake's reads (emulator)")
struct FirestoreKnownTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)

    func customer(_ store: FirestoreStore, _ conversation: String, _ text: String, at: Date) async throws -> StoredMessage {
        try await store.append(NewMessage(conversationID: conversation, from: .customer, senderID: "u-" + conversation,
                                          text: text, at: at))
    }

    func queries(_ store: FirestoreStore) -> Int { store.rest.calls.withLock { $0["runQuery"] ?? 0 } }

    @Test("twenty conversations in one batch: one query before the commits, not twenty")
    func oneQueryPerBatch() async throws {
        let store = try await openStore()
        for i in 0..<20 { _ = try await customer(store, "c\(i)", "hello", at: Self.t0.addingTimeInterval(Double(i))) }
        let page = try await store.pending(bot: ConformanceSuite.bot.id, after: .start, limit: 100)
        #expect(page.messages.count == 20)
        let before = queries(store)
        let results = try await store.commit(batch: page.messages.map { ConformanceSuite.sampleCommit($0, after: nil, reply: "hi") })
        #expect(results == Array(repeating: .committed, count: 20))
        #expect(queries(store) - before == 1, "one query for what was written since the page")
        try await store.close()
    }

    @Test("an agent's message written after the page silences the reply")
    func agentSinceThePage() async throws {
        let store = try await openStore()
        let m = try await customer(store, "c", "hello", at: Self.t0)
        let page = try await store.pending(bot: ConformanceSuite.bot.id, after: .start, limit: 100)
        #expect(page.messages.map(\.id) == [m.id])
        _ = try await store.append(NewMessage(conversationID: "c", from: .agent, senderID: "agent:li", text: "Li here",
                                              at: Self.t0.addingTimeInterval(1)))
        let before = queries(store)
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(m, after: nil, reply: "hi")]) == [.silenced])
        #expect(queries(store) - before == 1)
        #expect(try await store.transcript(conversation: "c").map(\.from) == [.customer, .agent], "no reply after the agent's message")
        try await store.close()
    }

    @Test("the second of two messages read in one page cannot commit before the first, without a query for the conversation")
    func orderFromThePage() async throws {
        let store = try await openStore()
        let m1 = try await customer(store, "c", "one", at: Self.t0)
        let m2 = try await customer(store, "c", "two", at: Self.t0.addingTimeInterval(1))
        _ = try await store.pending(bot: ConformanceSuite.bot.id, after: .start, limit: 100)
        let before = queries(store)
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(m2, after: nil, reply: "2")]) == [.outOfOrder])
        #expect(queries(store) - before == 1)
        let first = ConformanceSuite.sampleCommit(m1, after: nil, reply: "1")
        let results = try await store.commit(batch: [first, ConformanceSuite.sampleCommit(m2, after: first.state, reply: "2")])
        #expect(results == [.committed, .committed])
        #expect(try await store.transcript(conversation: "c").filter { $0.from == .bot }.map(\.text) == ["1", "2"])
        try await store.close()
    }

    @Test("what a batch read ahead of the intake is the next page, without a query")
    func readAheadIsTheNextPage() async throws {
        let store = try await openStore()
        var sent: [StoredMessage] = []
        for i in 0..<3 { sent.append(try await customer(store, "c\(i)", "hello", at: Self.t0.addingTimeInterval(Double(i)))) }
        let first = try await store.pending(bot: ConformanceSuite.bot.id, after: .start, limit: 1)
        #expect(first.messages.map(\.id) == [sent[0].id])
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(sent[0], after: nil, reply: "hi")]) == [.committed])
        let before = queries(store)
        // A full page: the read ahead holds a page's worth.
        let next = try await store.pending(bot: ConformanceSuite.bot.id, after: first.end, limit: 2)
        #expect(next.messages.map(\.id) == [sent[1].id, sent[2].id], "in the intake's order, Usher's reply left out")
        #expect(queries(store) == before, "no query: the batch's read ahead holds them")
        let after = try await store.pending(bot: ConformanceSuite.bot.id, after: next.end, limit: 10)
        #expect(after.messages.isEmpty)
        #expect(queries(store) == before + 1, "past the range: a query")
        try await store.close()
    }

    @Test("a read ahead that holds only Usher's replies is not the next page: what was written after it is")
    func aReadAheadOfRepliesIsNotTheEnd() async throws {
        let store = try await openStore()
        let bot = ConformanceSuite.bot.id
        let m1 = try await customer(store, "c1", "one", at: Self.t0)
        let m2 = try await customer(store, "c2", "two", at: Self.t0.addingTimeInterval(1))
        let first = try await store.pending(bot: bot, after: .start, limit: 1)
        // Decided now, as the worker does: the reply is stamped after m2.
        var answer = ConformanceSuite.sampleCommit(m1, after: nil, reply: "1")
        answer.outgoing[0].at = Date()
        #expect(try await store.commit(batch: [answer]) == [.committed])
        let second = try await store.pending(bot: bot, after: first.end, limit: 10)
        #expect(second.messages.map(\.id) == [m2.id])
        // This batch reads ahead onto the reply to m1, written after m2: the range ends there.
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(m2, after: nil, reply: "2")]) == [.committed])
        let m3 = try await customer(store, "c3", "three", at: Date().addingTimeInterval(1))
        let third = try await store.pending(bot: bot, after: second.end, limit: 10)
        #expect(third.messages.map(\.id) == [m3.id], "not only the reply the range holds, read again until the next sweep")
        try await store.close()
    }

    @Test("a page that does not go on where the last one ended drops what was read: commits read their conversation")
    func brokenRangeReadsTheConversation() async throws {
        let store = try await openStore()
        let m1 = try await customer(store, "c", "one", at: Self.t0)
        let m2 = try await customer(store, "c", "two", at: Self.t0.addingTimeInterval(1))
        let first = try await store.pending(bot: ConformanceSuite.bot.id, after: .start, limit: 1)
        #expect(first.messages.map(\.id) == [m1.id])
        // A read from a made-up place past the first page: the range is broken.
        let ahead = store.token(try #require(m2.position(in: store)))
        _ = try await store.pending(bot: ConformanceSuite.bot.id, after: ahead, limit: 10)
        #expect(store.memory.withLock { $0.known[ConformanceSuite.bot.id] } == nil, "the range is dropped")
        let before = queries(store)
        #expect(try await store.commit(batch: [ConformanceSuite.sampleCommit(m2, after: nil, reply: "2")]) == [.outOfOrder])
        #expect(queries(store) - before == 1, "the conversation read: the first message is not done")
        try await store.close()
    }
}

@Suite("Firestore store: what a read keeps")
struct FirestoreSnapshotKeepTests {
    func doc(_ updateTime: String) -> FirestoreDocument { FirestoreDocument(name: "x", fields: [:], updateTime: updateTime) }

    @Test("a read that began before a commit and ended after it does not put the older documents back")
    func olderReadDoesNotOverwrite() {
        var memory = FirestoreStore.Memory()
        let written = FirestoreStore.Snapshot(state: doc("2026-12-05T10:00:02.000200Z"), conversation: doc("2026-12-05T10:00:02.000200Z"))
        memory.keep(written, for: "bot/c")
        // The page's batchGet: the state as it was before the commit, the conversation touched by the app since.
        memory.keep(FirestoreStore.Snapshot(state: doc("2026-12-05T10:00:01.5Z"), conversation: doc("2026-12-05T10:00:03Z")), for: "bot/c")
        #expect(memory.read["bot/c"]?.state?.updateTime == "2026-12-05T10:00:02.000200Z", "the commit's state stays")
        #expect(memory.read["bot/c"]?.conversation?.updateTime == "2026-12-05T10:00:03Z", "the newer conversation is taken")
        // A read that did not find the state (it began before the first commit created it).
        memory.keep(FirestoreStore.Snapshot(state: nil, conversation: doc("2026-12-05T10:00:03Z")), for: "bot/c")
        #expect(memory.read["bot/c"]?.state != nil)
        // A newer read wins.
        memory.keep(FirestoreStore.Snapshot(state: doc("2026-12-05T10:00:04Z"), conversation: nil), for: "bot/c")
        #expect(memory.read["bot/c"]?.state?.updateTime == "2026-12-05T10:00:04Z")
    }
}
