import Foundation
import Testing
@testable import UsherFirestore

/// The done ids of a state document: one string field, read back the same, older ones dropped,
/// and the map form an older state document has still read.
@Suite("Firestore store: done marks")
struct DoneMarksTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000.25)

    func state(_ done: FirestoreValue) -> FirestoreDocument { FirestoreDocument(name: "s", fields: ["done": done]) }

    @Test("written as one JSON string, ids in order, read back the same")
    func roundTrip() throws {
        let marks = DoneMarks().adding("m2", at: Self.t0.addingTimeInterval(1), lookback: 600)
            .adding("m \"1\"", at: Self.t0, lookback: 600)
        let value = marks.value
        #expect(value == .string(#"{"m \"1\"":"2026-05-28T20:26:40.250000Z","m2":"2026-05-28T20:26:41.250000Z"}"#))
        let back = DoneMarks(state(value))
        #expect(back == marks)
        #expect(back.contains("m \"1\"") && back.contains("m2") && !back.contains("m3"))
        #expect(back.newest == Self.t0.addingTimeInterval(1))
    }

    @Test("an id more than the look-back behind the newest is dropped")
    func lookback() {
        let marks = DoneMarks().adding("old", at: Self.t0, lookback: 600)
            .adding("kept", at: Self.t0.addingTimeInterval(300), lookback: 600)
            .adding("new", at: Self.t0.addingTimeInterval(601), lookback: 600)
        #expect(!marks.contains("old") && marks.contains("kept") && marks.contains("new"))
    }

    @Test("a state document written with a map of timestamps reads the same")
    func mapForm() {
        let map = FirestoreValue.map(["m1": .timestamp("2026-05-28T20:26:40.250000Z"), "m2": .timestamp("2026-05-28T20:26:41.250000Z")])
        let marks = DoneMarks(state(map))
        #expect(marks.contains("m1") && marks.contains("m2"))
        #expect(marks.newest == Self.t0.addingTimeInterval(1))
        #expect(DoneMarks(nil) == DoneMarks() && DoneMarks(nil).newest == nil)
    }
}
