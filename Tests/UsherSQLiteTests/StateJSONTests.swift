import Foundation
import Testing
import UsherEngine
@testable import UsherStore
@testable import UsherSQLite

@Suite("State JSON (UsherStore), and through the SQLite store")
struct StateJSONTests {
    static var full: ConversationState {
        var s = ConversationState(conversationID: "c-\"42\"\n", channel: "web", locale: "zh-CN", customerName: "Pooja 🙂",
                                  customerID: "u\\7")
        s.owner = .waiting
        s.startSession(at: Date(timeIntervalSinceReferenceDate: 817_702_382.363_455_2))
        s.lastActivityAt = Date(timeIntervalSinceReferenceDate: 817_702_390.25)
        s.customerMessages = 4
        s.botReplies = 3
        s.fallbacksInARow = 1
        s.recordFire(of: "opening", at: Date(timeIntervalSinceReferenceDate: 817_702_382.1))
        s.recordFire(of: "opening", at: Date(timeIntervalSinceReferenceDate: 817_702_383))
        s.recordFire(of: "退款", at: Date(timeIntervalSinceReferenceDate: -1.5))
        s.recentReplies = [Date(timeIntervalSinceReferenceDate: 1e-7), Date(timeIntervalSinceReferenceDate: 1e12)]
        s.tags = ["vip", "has-order", "\u{0}\u{1}\u{1F}", "tab\there"]
        s.metadata = ["order": "123-4567890-1234567", "note": "say \"hi\"", "": "empty key"]
        s.language = "es"
        s.version = 17
        return s
    }

    @Test func everyStoredPropertyIsWritten() {
        // Fails when ConversationState gains a property: teach StateJSON about it.
        let labels = Set(Mirror(reflecting: Self.full).children.compactMap(\.label))
        #expect(labels == StateJSON.keys)
    }

    @Test(arguments: [ConversationState(conversationID: "empty"), full])
    func roundTrip(_ s: ConversationState) throws {
        let text = StateJSON.encode(s)
        #expect(try StateJSON.decode(text) == s)
        var bytes = Array(text.utf8)
        #expect(try bytes.withUnsafeMutableBufferPointer { try StateJSON.fastDecode(UnsafeBufferPointer($0)) } == s,
                "the fast reader reads what the writer writes, without falling back")
    }

    @Test(arguments: [ConversationState(conversationID: "empty"), full])
    func foundationReadsWhatWeWriteAndBack(_ s: ConversationState) throws {
        let ours = StateJSON.encode(s)
        #expect(try JSONDecoder().decode(ConversationState.self, from: Data(ours.utf8)) == s)
        let theirs = String(decoding: try JSONEncoder().encode(s), as: UTF8.self)
        #expect(try StateJSON.decode(theirs) == s)
    }

    @Test func unknownKeysFallBackToTheFullDecoder() throws {
        var text = StateJSON.encode(Self.full)
        text.removeLast()
        text += #","addedByANewerBuild":{"x":[1,2,3]}}"#
        var bytes = Array(text.utf8)
        #expect(throws: (any Error).self) {
            try bytes.withUnsafeMutableBufferPointer { try StateJSON.fastDecode(UnsafeBufferPointer($0)) }
        }
        #expect(try StateJSON.decode(text) == Self.full)
    }

    @Test(arguments: ["", "{", "[]", #"{"conversationID":"c"}"#, "null", #"{"conversationID":1}"#])
    func garbageIsABadStateError(_ text: String) {
        #expect { try StateJSON.decode(text) } throws: { ($0 as? StoreError)?.code == "bad-state" }
    }

    @Test func aStateWrittenByAnotherConnectionIsReadAfresh() async throws {
        let dir = TempDir()
        let path = dir.path()
        let store = try await SQLiteStore(path: path)
        defer { Task { try? await store.close() } }
        let m = try await store.append(Fixture.customer("c", "hi"))
        #expect(try await Fixture.decideAndCommit(store, m) == .committed)
        let cached = try await store.state(bot: Fixture.bot.id, conversation: "c")
        var changed = try #require(cached)
        changed.tags = ["changed-elsewhere"]
        let other = try SQLiteConnection(path: path)
        let stmt = try other.statement(sql: "UPDATE bot_state SET state = ?1")
        stmt.bind(1, StateJSON.encode(changed))
        _ = try stmt.step()
        stmt.reset()
        other.close()
        #expect(try await store.state(bot: Fixture.bot.id, conversation: "c")?.tags == ["changed-elsewhere"])
    }
}
