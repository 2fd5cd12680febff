import Foundation
import Testing
import UsherRuntime
import UsherStore

/// The worker's scheduling on a store workers share (`SharedSchedule`), step by step: no store,
/// no tasks, and time passed in by the test.
@Suite("Shared schedule")
struct SharedScheduleTests {
    static func m(_ seq: Int64, _ c: String) -> StoredMessage {
        StoredMessage(seq: seq, id: "m\(seq)", conversationID: c, from: .customer, text: "hi", at: Date(timeIntervalSince1970: 0))
    }

    static func intake(_ messages: [StoredMessage], through: Int64, passedOver: Int64? = nil) -> Intake {
        Intake(messages: messages, readThrough: through, passedOver: passedOver)
    }

    static func schedule(cursor: Int64 = 0, share: Share = .all, writes: Int = 2) -> SharedSchedule {
        SharedSchedule(cursor: cursor, share: share,
                       options: .init(batchSize: 10, writesInFlight: writes, cursorInterval: .milliseconds(250),
                                      rescanInterval: .seconds(1), memberInterval: .milliseconds(250),
                                      idleWait: .milliseconds(500), reportInterval: .milliseconds(100)),
                       now: .zero)
    }

    /// Reads a batch of `messages` at `now` and runs it up to its `.write`; returns the write's id.
    static func readAndWrite(_ s: inout SharedSchedule, _ messages: [StoredMessage], through: Int64,
                             now: Duration = .zero, share: Share = .all) -> Int? {
        guard case .read = s.next(now: now, share: share) else { return nil }
        s.read(intake(messages, through: through), generation: 1, now: now)
        guard case let .prepare(id, batch, _) = s.next(now: now, share: share), batch == messages else { return nil }
        s.prepared(id)
        guard s.next(now: now, share: share) == .write(id: id) else { return nil }
        return id
    }

    @Test func aBatchIsDecidedThenWrittenWhileTheNextReadLeavesItsConversationsOut() throws {
        var s = Self.schedule(cursor: 4)
        #expect(s.next(now: .zero, share: .all) == .read(after: 4, skipping: [:], share: .all, unlessCovered: nil))
        s.read(Self.intake([Self.m(5, "a"), Self.m(6, "b"), Self.m(7, "a")], through: 7), generation: 1, now: .zero)
        guard case let .prepare(id, messages, _) = s.next(now: .zero, share: .all) else { Issue.record("no prepare"); return }
        #expect(messages.map(\.id) == ["m5", "m6", "m7"])
        s.prepared(id)
        #expect(s.next(now: .zero, share: .all) == .write(id: id))
        // The next read goes on from where the last one read through, leaving a and b out,
        // unless the store's signals say nothing came since it began.
        #expect(s.next(now: .zero, share: .all)
                == .read(after: 7, skipping: ["a": 7, "b": 6], share: .all, unlessCovered: .init(since: 1, through: 7)))
        s.read(Self.intake([], through: 7), generation: 2, now: .zero)
        #expect(s.next(now: .zero, share: .all) == .awaitSignalOrChild(generation: 2, timeout: .milliseconds(500)))
        s.written(id, progress: true, unfinished: false, now: .milliseconds(10))
        #expect(s.inFlight.isEmpty)
        #expect(s.next(now: .milliseconds(10), share: .all) == .read(after: 7, skipping: [:], share: .all,
                                                                    unlessCovered: .init(since: 2, through: 7)))
    }

    /// Nothing read and nothing in flight: look once more after the newest seq, then idle after
    /// it (the bot's own replies, written earlier, must not wake the wait).
    @Test func anEmptyReadLooksAgainThenIdlesAfterTheNewestSeq() {
        var s = Self.schedule(cursor: 3)
        _ = s.next(now: .zero, share: .all)
        s.read(Self.intake([], through: 3), generation: 1, now: .zero)
        #expect(s.next(now: .zero, share: .all) == .readAgain(after: 3, share: .all))
        s.readAgain(Self.intake([], through: 3), latest: 9, now: .zero)
        #expect(s.next(now: .zero, share: .all) == .idle(after: 9, timeout: .milliseconds(500), signalGeneration: nil))
        #expect(s.hasCaughtUp)
        guard case .read = s.next(now: .milliseconds(500), share: .all) else { Issue.record("no read after the idle"); return }
    }

    /// A read the store's signals say would come back empty is skipped; idle then waits on the
    /// signal alone.
    @Test func aSkippedReadIdlesOnTheSignal() throws {
        var s = Self.schedule()
        let id = try #require(Self.readAndWrite(&s, [Self.m(1, "a")], through: 1))
        s.written(id, progress: true, unfinished: false, now: .zero)
        guard case let .read(_, _, _, covered) = s.next(now: .zero, share: .all) else { Issue.record("no read"); return }
        #expect(covered == .init(since: 1, through: 1))
        s.readSkipped(generation: 5, now: .zero)
        #expect(s.next(now: .zero, share: .all) == .idle(after: 1, timeout: .milliseconds(250), signalGeneration: 5),
                "the move owed is due in 250 ms: the wait is no longer")
    }

    /// Idle with a move owed and due: the cursor moves first (the loop waits for it), then idles.
    @Test func aMoveOwedIsMadeBeforeIdling() throws {
        var s = Self.schedule()
        let id = try #require(Self.readAndWrite(&s, [Self.m(1, "a")], through: 1))
        s.written(id, progress: true, unfinished: false, now: .milliseconds(100))
        _ = s.next(now: .milliseconds(300), share: .all)
        s.read(Self.intake([], through: 1), generation: 2, now: .milliseconds(300))
        _ = s.next(now: .milliseconds(300), share: .all)
        s.readAgain(Self.intake([], through: 1), latest: 2, now: .milliseconds(300))
        #expect(s.next(now: .milliseconds(300), share: .all) == .move(mover: true, safe: 1, share: .all))
        #expect(s.next(now: .milliseconds(300), share: .all) == .awaitChild)
        s.moved(to: 1, now: .milliseconds(310))
        #expect(s.cursor == 1)
        #expect(s.next(now: .milliseconds(310), share: .all) == .idle(after: 2, timeout: .milliseconds(500), signalGeneration: nil))
    }

    /// While work flows, the first worker of the share moves the cursor in the background once
    /// an interval has passed; another only reads where it is — unless it has not moved for four.
    @Test func whileWorkFlowsTheFirstWorkerMovesTheCursor() throws {
        let second = Share(index: 1, count: 2)
        var s = Self.schedule(share: second)
        let id = try #require(Self.readAndWrite(&s, [Self.m(1, "a")], through: 1, share: second))
        s.written(id, progress: true, unfinished: false, now: .milliseconds(300))
        // Among others, a write is followed by a word on where the reads stand.
        #expect(s.next(now: .milliseconds(300), share: second) == .report(safe: 1, share: second))
        #expect(s.next(now: .milliseconds(300), share: second) == .move(mover: false, safe: 1, share: second))
        s.moved(to: 0, now: .milliseconds(320))
        s.reported()
        let later = try #require(Self.readAndWrite(&s, [Self.m(2, "b")], through: 2, now: .milliseconds(320), share: second))
        s.written(later, progress: true, unfinished: false, now: .milliseconds(1100))
        #expect(s.next(now: .milliseconds(1100), share: second) == .report(safe: 2, share: second))
        #expect(s.next(now: .milliseconds(1100), share: second) == .move(mover: true, safe: 2, share: second),
                "not moved for four intervals: this worker moves it")
    }

    /// When the share changes, the leases go at once but for what is in flight — and those too
    /// once it is written; the reads go back to the cursor.
    @Test func aShareChangeReleasesAndReadsFromTheCursor() throws {
        var s = Self.schedule(cursor: 2)
        let id = try #require(Self.readAndWrite(&s, [Self.m(3, "a")], through: 3))
        let half = Share(index: 0, count: 2)
        #expect(s.next(now: .zero, share: half) == .release(keeping: ["a"]))
        #expect(s.next(now: .zero, share: half) == .read(after: 2, skipping: ["a": 3], share: half, unlessCovered: nil))
        s.read(Self.intake([], through: 3), generation: 1, now: .zero)
        s.written(id, progress: false, unfinished: false, now: .zero)
        #expect(s.next(now: .zero, share: half) == .release(keeping: []))
    }

    /// A write that left a message unfinished sends the reads back to the cursor at once.
    @Test func anUnfinishedWriteReadsFromTheCursor() throws {
        var s = Self.schedule(cursor: 2)
        let id = try #require(Self.readAndWrite(&s, [Self.m(5, "a")], through: 5))
        s.written(id, progress: false, unfinished: true, now: .zero)
        #expect(s.next(now: .zero, share: .all) == .read(after: 2, skipping: [:], share: .all, unlessCovered: nil))
    }

    /// What a read passed over (another worker's conversations) is read again once a rescan
    /// interval has passed, from just below the first such message.
    @Test func whatWasPassedOverIsReadAgainAtTheNextRescan() throws {
        var s = Self.schedule()
        _ = s.next(now: .zero, share: .all)
        s.read(Intake(messages: [Self.m(9, "b")], readThrough: 9, passedOver: 4), generation: 1, now: .zero)
        guard case let .prepare(id, _, _) = s.next(now: .zero, share: .all) else { Issue.record("no prepare"); return }
        s.prepared(id)
        _ = s.next(now: .zero, share: .all)
        s.written(id, progress: true, unfinished: false, now: .milliseconds(500))
        _ = s.next(now: .milliseconds(500), share: .all)   // the move owed
        s.moved(to: 0, now: .milliseconds(500))
        guard case let .read(after, _, _, _) = s.next(now: .milliseconds(600), share: .all) else { Issue.record("no read"); return }
        #expect(after == 9, "before the rescan interval: on from the last read")
        s.read(Self.intake([], through: 9), generation: 2, now: .milliseconds(600))
        _ = s.next(now: .milliseconds(600), share: .all)
        s.readAgain(Self.intake([], through: 9), latest: 9, now: .milliseconds(600))
        _ = s.next(now: .milliseconds(600), share: .all)   // idle
        #expect(s.next(now: .seconds(1), share: .all) == .read(after: 3, skipping: [:], share: .all, unlessCovered: nil))
        #expect(s.takeRescans() == 1)
    }

    /// On stop: the writes in flight end, the move owed is made, then the loop is stopped.
    @Test func stopFinishesWritesAndTheMoveOwed() throws {
        var s = Self.schedule()
        let id = try #require(Self.readAndWrite(&s, [Self.m(1, "a")], through: 1))
        s.stop()
        #expect(s.next(now: .zero, share: .all) == .awaitChild)
        s.written(id, progress: true, unfinished: false, now: .milliseconds(10))
        #expect(s.next(now: .milliseconds(10), share: .all) == .move(mover: true, safe: 1, share: .all))
        #expect(s.next(now: .milliseconds(10), share: .all) == .awaitChild)
        s.moved(to: 1, now: .milliseconds(20))
        #expect(s.next(now: .milliseconds(20), share: .all) == .stopped)
    }

    /// At most `writesInFlight` batches are written at once: a third waits for one to end.
    @Test func aThirdBatchWaitsForAWriteSlot() throws {
        var s = Self.schedule()
        let first = try #require(Self.readAndWrite(&s, [Self.m(1, "a")], through: 1))
        _ = try #require(Self.readAndWrite(&s, [Self.m(2, "b")], through: 2))
        _ = s.next(now: .zero, share: .all)
        s.read(Self.intake([Self.m(3, "c")], through: 3), generation: 1, now: .zero)
        guard case let .prepare(id, _, _) = s.next(now: .zero, share: .all) else { Issue.record("no prepare"); return }
        s.prepared(id)
        #expect(s.next(now: .zero, share: .all) == .awaitChild)
        s.written(first, progress: true, unfinished: false, now: .zero)
        #expect(s.next(now: .zero, share: .all) == .write(id: id))
    }
}
