import Foundation
import Testing
import UsherStore

/// `usher run --from WHEN` as the stores get it.
@Suite("Start positions")
struct StartPositionTests {
    @Test func parsesNowBeginningDatesAndTimes() {
        let iso = ISO8601DateFormatter()
        #expect(StartPosition("now") == .now)
        #expect(StartPosition("beginning") == .beginning)
        #expect(StartPosition("2026-12-01") == .time(iso.date(from: "2026-12-01T00:00:00Z")!))
        #expect(StartPosition("2026-12-01T09:30:00+08:00") == .time(iso.date(from: "2026-12-01T01:30:00Z")!))
        #expect(StartPosition("2026-12-01T01:30:00.250Z") == .time(iso.date(from: "2026-12-01T01:30:00Z")!.addingTimeInterval(0.25)))
        for bad in ["", "yesterday", "Now", "2026-12-01T09:30:00", "2026-13-01", "12/01/2026", "2026-12-1"] {
            #expect(StartPosition(bad) == nil, "\(bad)")
        }
        #expect(StartPosition("2026-12-01T09:30:00+08:00")?.description == "2026-12-01T01:30:00Z")
    }
}
