public import Foundation

/// The virtual clock's starting time in a test file (`start: 2026-11-30T10:00:00+08:00`), and
/// `usher replay --start`: the same text, read the same way.
public enum RuleTestTime {
    /// When a test has no `start:`: Monday 5 January 2026, 10:00 in the bot's time zone — a
    /// working morning, so business-hours rules behave as on an ordinary day.
    static func defaultStart(in calendar: Calendar) -> Date {
        calendar.date(from: DateComponents(year: 2026, month: 1, day: 5, hour: 10))!
    }

    /// ISO 8601: `2026-11-30T10:00:00+08:00`, `…Z`, seconds optional, `T` or a space; without an
    /// offset (`2026-11-30T10:00`) the time is read in `calendar`'s time zone, the bot's. A bare
    /// date is its midnight. The error says what is wrong.
    public static func parse(_ text: String, in calendar: Calendar) -> Result<Date, TimeProblem> {
        let shape = /(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2}))?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?/
        guard let m = text.wholeMatch(of: shape) else {
            return .failure(TimeProblem(message: "'\(text)' is not a time; write it like 2026-11-30T10:00:00+08:00 (an ISO 8601 time; without the offset it is read in the bot's time zone)"))
        }
        let o = m.output
        let fields = DateComponents(year: Int(o.1)!, month: Int(o.2)!, day: Int(o.3)!,
                                    hour: o.4.map { Int($0)! } ?? 0, minute: o.5.map { Int($0)! } ?? 0,
                                    second: o.6.map { Int($0)! } ?? 0)
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        guard roundTrips(fields, utc) != nil else {
            return .failure(TimeProblem(message: "'\(text)' is not a real date and time; check the month, day, hour and minute"))
        }
        var cal = calendar
        if let zone = o.7 {
            guard let tz = offset(String(zone)) else {
                return .failure(TimeProblem(message: "'\(zone)' in '\(text)' is not a UTC offset; write one like +08:00 or Z"))
            }
            cal.timeZone = tz
        }
        guard let date = roundTrips(fields, cal) else {
            return .failure(TimeProblem(message: "'\(text)' does not exist in \(cal.timeZone.identifier): the clocks skip it (daylight saving time)"))
        }
        return .success(date)
    }

    /// A reason a `start:` is not a time.
    public struct TimeProblem: Error {
        public let message: String
    }

    /// The instant of `fields` in `cal`, or `nil` when `cal` would move it (Feb 30, a DST gap).
    private static func roundTrips(_ fields: DateComponents, _ cal: Calendar) -> Date? {
        guard let date = cal.date(from: fields) else { return nil }
        let back = cal.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return back == fields ? date : nil
    }

    /// `Z`, `+08`, `+0800`, `+08:00`.
    private static func offset(_ s: String) -> TimeZone? {
        if s == "Z" || s == "z" { return TimeZone(secondsFromGMT: 0) }
        let sign = s.hasPrefix("-") ? -1 : 1
        let digits = s.dropFirst().filter(\.isNumber)
        let hours = Int(digits.prefix(2)) ?? 99, minutes = Int(digits.dropFirst(2)) ?? 0
        guard hours <= 18, minutes < 60 else { return nil }
        return TimeZone(secondsFromGMT: sign * (hours * 3600 + minutes * 60))
    }
}
