import Foundation
import Testing
import UsherDiagnostics
import UsherRuntime
import UsherEngine
import UsherStore
import UsherStoreTestKit
import UsherTestSupport
@testable import UsherFirestore

@Suite("Firestore mapping files")
struct FirestoreMappingTests {
    @Test func theRoomsExampleLoads() throws {
        let (layout, diagnostics) = FirestoreLayout.load(path: repoRoot.appendingPathComponent("examples/firestore/rooms.yaml").path)
        #expect(diagnostics.isEmpty, "\(diagnostics.map(\.headline))")
        let l = try #require(layout)
        #expect(l.conversations == "rooms" && l.messages == "messages" && l.usherCollection == "usher_rooms")
        #expect(l.senderType == "senderId" && l.content == "text" && l.time == "date" && l.timeFormat == .seconds)
        #expect(l.customerMessageCount == nil && l.assignedToAgent == "agentAssigned")
        #expect(l.role(of: "agent-sam") == .agent && l.role(of: "u-123") == .customer && l.role(of: "usher") == .bot)
    }

    @Test func mistakesAreReportedWithTheirPlace() {
        let (layout, diagnostics) = FirestoreLayout.parse(path: "m.yaml", text: """
            firestore: 2
            messages:
              collection: messages
              fields: {sender_type: 'sender id', tme: date}
              sender_values: {customer: customer, agent: customer}
            usher_collection: messages
            """)
        #expect(layout == nil)
        let found = diagnostics.map { "\($0.code)@\($0.location?.line ?? 0):\($0.location?.column ?? 0)" }
        #expect(found.contains("unsupported-version@1:12"), "\(found)")
        #expect(found.contains("invalid-name@4:25"), "\(found)")
        #expect(found.contains("unknown-key@4:38"), "\(found)")
        #expect(found.contains("duplicate-value@5:46"), "\(found)")
        #expect(found.contains { $0.hasPrefix("same-collection@") }, "\(found)")
        #expect(diagnostics.first { $0.code == "unknown-key" }?.message.contains("did you mean 'time'") == true)
    }

    /// The rooms layout, end to end: a customer's message written as that app writes it is
    /// answered in its fields (`senderId: usher`, `text`, `date` in seconds).
    @Test func theWorkerAnswersInTheAppsOwnFields() async throws {
        let layout = FirestoreLayout.load(path: repoRoot.appendingPathComponent("examples/firestore/rooms.yaml").path).0!
        let store = try await openStore(layout: layout)
        let bot = try BotRuntime(path: try temporaryBot(TestBot.rules).path)
        let rest = store.rest
        try await runWorker([store], bot: bot) {
            for k in 0..<4 {
                try await rest.commit([.create(rest.name("rooms/room-7/messages/m\(k)"), [
                    "senderId": .string("u-42"), "senderDisplayName": .string("Pooja"), "text": .string("hi \(k)"),
                    "date": .double(Date().timeIntervalSince1970),
                ])])
                try await eventually("answer \(k)") {
                    var q = FirestoreQuery(parent: "rooms/room-7", collection: "messages")
                    q.orderBy = ["date", "__name__"]
                    return try await rest.runQuery(q).count == 2 * (k + 1)
                }
            }
        }
        var q = FirestoreQuery(parent: "rooms/room-7", collection: "messages")
        q.orderBy = ["date", "__name__"]
        let docs = try await rest.runQuery(q)
        let said = docs.filter { $0.fields["senderId"]?.string != "u-42" }
        #expect(said.map { $0.fields["text"]?.string ?? "" } == ["one", "two", "three", seedNotice], "\(said.map(\.fields))")
        #expect(said.prefix(3).allSatisfy { $0.fields["senderId"] == .string("usher") && $0.fields["senderDisplayName"] == .string("Temp") })
        #expect(said.last?.fields["senderId"] == .string("usher-notice"))
        #expect(said.allSatisfy { if case .double = $0.fields["date"] { true } else { false } }, "dates in seconds, as the app writes them")
        let room = try await rest.batchGet([rest.name("rooms/room-7")])[0]
        #expect(room?.fields == ["agentAssigned": .bool(true)], "only the mapped field is written: \(String(describing: room?.fields))")
        try await store.close()
    }

    /// A reply's quick replies are a field of its document — `quickReplies` unless the mapping
    /// renames it, none when the mapping leaves it out — and read back with it.
    @Test func quickRepliesAreAFieldOfTheReplyRenamedOrLeftOut() async throws {
        let offered = [QuickReply(title: "Track my order"), QuickReply(title: "Returns", url: "https://shop.example/returns")]
        for (mapping, field) in [(nil, "quickReplies"), ("buttons", "buttons"), ("null", nil)] as [(String?, String?)] {
            let layout = try #require(mapping.map {
                FirestoreLayout.parse(path: "q.yaml", text: "firestore: 1\nmessages:\n  fields: {quick_replies: \($0)}\n").0
            } ?? .seed)
            let store = try await openStore(layout: layout)
            let m = try await store.append(NewMessage(conversationID: "c", from: .customer, senderID: "u-1", text: "help"))
            #expect(try await store.commit(ConformanceSuite.sampleCommit(m, after: nil, reply: "hi", quickReplies: offered)) == .committed)
            let docs = try await store.rest.runQuery(FirestoreQuery(parent: "conversations/c", collection: "messages"))
            let reply = try #require(docs.first { $0.fields["content"]?.string == "hi" })
            let written: FirestoreValue = .array([.map(["title": .string("Track my order")]),
                                                  .map(["title": .string("Returns"), "url": .string("https://shop.example/returns")])])
            #expect(reply.fields.filter { $0.value == written }.map(\.key) == (field.map { [$0] } ?? []), "\(reply.fields)")
            #expect(try await store.transcript(conversation: "c").map(\.quickReplies) == [[], field == nil ? [] : offered])
            try await store.close()
        }
    }
}
