import Foundation
import Testing
import UsherRuntime
import UsherStore

/// The worker's scheduling on a core store (`Schedule`), step by step: no store, no tasks, and
/// time passed in by the test.
@Suite("Schedule")
struct ScheduleTests {
    /// A message of conversation `c` at sequence `seq` (positions in these tests are "p<seq>").
    static func m(_ seq: Int64, _ c: String) -> StoredMessage {
        StoredMessage(seq: seq, id: "m\(seq)", conversationID: c, from: .customer, text: "hi", at: Date(timeIntervalSince1970: 0))
    }

    static func page(_ messages: [StoredMessage], end: Int64) -> Page { Page(messages: messages, end: StorePosition("p\(end)")) }

    static func schedule(batchSize: Int = 10, writes: Int = 2, interval: Duration = .seconds(1)) -> Schedule {
        Schedule(position: .start,
                 options: .init(batchSize: batchSize, writesInFlight: writes, positionInterval: interval, idleWait: .milliseconds(500)),
                 now: .zero)
    }

    /// The ids of a `.write`, or nil for another action.
    static func written(_ action: Schedule.Action) -> (Int, [String])? {
        if case let .write(id, messages) = action { return (id, messages.map(\.id)) }
        return nil
    }

    @Test func readsWritesThenMovesThePositionAndIdles() {
        var s = Self.schedule()
        #expect(s.next(now: .zero) == .read(after: .start, limit: 10))
        s.read(Self.page([Self.m(1, "a"), Self.m(2, "b")], end: 2), now: .zero)
        let write = try! #require(Self.written(s.next(now: .zero)))
        #expect(write.1 == ["m1", "m2"])
        // Reads ahead while the batch is written.
        #expect(s.next(now: .zero) == .read(after: StorePosition("p2"), limit: 10))
        s.read(Self.page([], end: 2), now: .zero)
        #expect(s.next(now: .zero) == .awaitWrite)
        s.written(write.0, unfinished: false, now: .milliseconds(10))
        // New messages may have come while it was written: read once more first.
        #expect(s.next(now: .milliseconds(10)) == .read(after: StorePosition("p2"), limit: 10))
        s.read(Self.page([], end: 2), now: .milliseconds(10))
        // Caught up, everything written: the position moves at once, then the loop idles.
        #expect(s.next(now: .milliseconds(10)) == .move(to: StorePosition("p2")))
        s.moved(to: StorePosition("p2"), now: .milliseconds(10))
        #expect(s.next(now: .milliseconds(10)) == .idle(after: StorePosition("p2"), timeout: .milliseconds(500)))
        #expect(s.hasCaughtUp)
        s.waited()
        #expect(s.next(now: .seconds(1)) == .read(after: StorePosition("p2"), limit: 10))
    }

    /// A conversation is in at most one batch in flight: its next message waits for that batch,
    /// while another conversation's goes out in a second batch.
    @Test func aConversationInFlightHoldsItsNextMessage() {
        var s = Self.schedule()
        _ = s.next(now: .zero)
        s.read(Self.page([Self.m(1, "a")], end: 1), now: .zero)
        let first = try! #require(Self.written(s.next(now: .zero)))
        #expect(s.next(now: .zero) == .read(after: StorePosition("p1"), limit: 10))
        s.read(Self.page([Self.m(2, "a"), Self.m(3, "b")], end: 3), now: .zero)
        let second = try! #require(Self.written(s.next(now: .zero)))
        #expect(second.1 == ["m3"], "b goes out; a's second message waits for the first batch")
        #expect(s.writesInFlight == 2)
        // Two writes in flight: no third, and no read until one ends.
        #expect(s.next(now: .zero) == .awaitWrite)
        s.written(first.0, unfinished: false, now: .zero)
        let third = try! #require(Self.written(s.next(now: .zero)))
        #expect(third.1 == ["m2"])
    }

    /// The position never passes a message not written: a later page written first waits for
    /// the earlier one.
    @Test func thePositionMovesOnlyThroughPagesWrittenThrough() {
        var s = Self.schedule(batchSize: 1, interval: .zero)
        _ = s.next(now: .zero)
        s.read(Self.page([Self.m(1, "a")], end: 1), now: .zero)
        let first = try! #require(Self.written(s.next(now: .zero)))
        _ = s.next(now: .zero)
        s.read(Self.page([Self.m(2, "b")], end: 2), now: .zero)
        let second = try! #require(Self.written(s.next(now: .zero)))
        s.written(second.0, unfinished: false, now: .seconds(1))
        var action = s.next(now: .seconds(1))
        #expect(action == .awaitWrite || action == .read(after: StorePosition("p2"), limit: 1), "no move while m1 is in flight: \(action)")
        s.written(first.0, unfinished: false, now: .seconds(2))
        action = s.next(now: .seconds(2))
        #expect(action == .move(to: StorePosition("p2")), "\(action)")
    }

    /// While work flows, the position is saved at most once per interval.
    @Test func whileWorkFlowsThePositionMovesOncePerInterval() {
        var s = Self.schedule(batchSize: 1, writes: 1, interval: .seconds(1))
        var moves: [StorePosition] = []
        var seq: Int64 = 0
        var t = Duration.zero
        for _ in 0..<40 {
            t += .milliseconds(100)
            switch s.next(now: t) {
            case .read:
                seq += 1
                s.read(Self.page([Self.m(seq, "c\(seq)")], end: seq), now: t)
            case let .write(id, _):
                s.written(id, unfinished: false, now: t)
            case let .move(to):
                moves.append(to)
                s.moved(to: to, now: t)
            default:
                Issue.record("unexpected action")
            }
        }
        #expect((3...4).contains(moves.count), "\(moves)")
    }

    /// A batch that left a message unwritten makes the loop read again from the durable
    /// position once the other writes are done (what is written is not pending any more).
    @Test func anUnfinishedWriteReadsAgainFromThePosition() {
        var s = Self.schedule(batchSize: 1)
        _ = s.next(now: .zero)
        s.read(Self.page([Self.m(1, "a"), Self.m(2, "b")], end: 2), now: .zero)
        let first = try! #require(Self.written(s.next(now: .zero)))
        let second = try! #require(Self.written(s.next(now: .zero)))
        s.written(first.0, unfinished: true, now: .zero)
        #expect(s.next(now: .zero) == .awaitWrite, "the other write ends first")
        s.written(second.0, unfinished: false, now: .zero)
        #expect(s.next(now: .zero) == .read(after: .start, limit: 1))
    }

    /// On stop: no new reads or batches; the writes in flight end, the position is saved, and
    /// then the loop is stopped.
    @Test func stopFinishesTheWritesInFlightAndSavesThePosition() {
        var s = Self.schedule(batchSize: 1, writes: 1)
        _ = s.next(now: .zero)
        s.read(Self.page([Self.m(1, "a"), Self.m(2, "b")], end: 2), now: .zero)
        let first = try! #require(Self.written(s.next(now: .zero)))
        s.stop()
        #expect(s.next(now: .zero) == .awaitWrite)
        s.written(first.0, unfinished: false, now: .zero)
        // m2 was read but not written: the position may not pass it.
        #expect(s.next(now: .zero) == .stopped)
        #expect(s.position == .start)
    }

    @Test func stopSavesThePositionWrittenThrough() {
        var s = Self.schedule(interval: .seconds(60))
        _ = s.next(now: .zero)
        s.read(Self.page([Self.m(1, "a")], end: 1), now: .zero)
        let first = try! #require(Self.written(s.next(now: .zero)))
        s.written(first.0, unfinished: false, now: .zero)
        s.stop()
        #expect(s.next(now: .zero) == .move(to: StorePosition("p1")))
        s.moved(to: StorePosition("p1"), now: .zero)
        #expect(s.next(now: .zero) == .stopped)
    }

    /// A batch holds at most `batchSize` conversations' messages; the rest go in the next.
    @Test func batchesKeepToTheirSize() {
        var s = Self.schedule(batchSize: 2, writes: 2)
        _ = s.next(now: .zero)
        s.read(Self.page([Self.m(1, "a"), Self.m(2, "b"), Self.m(3, "c")], end: 3), now: .zero)
        #expect(Self.written(s.next(now: .zero))?.1 == ["m1", "m2"])
        #expect(Self.written(s.next(now: .zero))?.1 == ["m3"])
    }
}
