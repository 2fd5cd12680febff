public import Foundation

/// Opening hours in the bot's time zone: windows per weekday, plus dates that are closed all day.
public struct Schedule: Sendable {
    /// A half-open window of minutes after local midnight; `end` may exceed 1440 for a window
    /// that runs past midnight ("22:00-02:00").
    public struct Window: Sendable, Hashable {
        public var start: Int
        public var end: Int
    }

    /// A calendar date, in the bot's time zone.
    public struct Day: Sendable, Hashable, Comparable, CustomStringConvertible {
        public var year: Int, month: Int, day: Int
        public init(year: Int, month: Int, day: Int) {
            self.year = year
            self.month = month
            self.day = day
        }
        public static func < (a: Day, b: Day) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }
        public var description: String {
            func pad(_ n: Int, _ w: Int) -> String { String(repeating: "0", count: max(0, w - String(n).count)) + String(n) }
            return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        }
    }

    public var name: String
    /// Windows indexed by weekday, 0 = Monday … 6 = Sunday.
    public var windows: [[Window]]
    public var closedDays: Set<Day>

    public init(name: String, windows: [[Window]], closedDays: Set<Day>) {
        self.name = name
        self.windows = windows
        self.closedDays = closedDays
    }

    /// Whether `date` falls inside the schedule, evaluated with `calendar` (whose time zone is the
    /// bot's).
    public func contains(_ date: Date, calendar: Calendar) -> Bool {
        let c = calendar.dateComponents([.year, .month, .day, .weekday, .hour, .minute], from: date)
        guard let y = c.year, let m = c.month, let d = c.day, let wd = c.weekday,
              let h = c.hour, let mi = c.minute else { return false }
        let weekday = (wd + 5) % 7               // Calendar: 1 = Sunday → 6; 2 = Monday → 0
        let minute = h * 60 + mi
        let today = Day(year: y, month: m, day: d)
        if !closedDays.contains(today),
           windows[weekday].contains(where: { minute >= $0.start && minute < $0.end }) {
            return true
        }
        // A window of yesterday that runs past midnight.
        let yesterday = (weekday + 6) % 7
        if windows[yesterday].contains(where: { $0.end > 1440 && minute + 1440 < $0.end }),
           let prev = calendar.date(byAdding: .day, value: -1, to: date) {
            let p = calendar.dateComponents([.year, .month, .day], from: prev)
            if let py = p.year, let pm = p.month, let pd = p.day,
               !closedDays.contains(Day(year: py, month: pm, day: pd)) {
                return true
            }
        }
        return false
    }

    public static let weekdayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
}
