import Foundation

/// Times in the bot's time zone for reports (`10:00:05`, `2026-11-30`), without a
/// `DateFormatter`: the zone offset is looked up once per hour of input, not per message.
struct ReportLocalTime {
    let timeZone: TimeZone
    private var hour = Int.min
    private var offset = 0

    init(_ timeZone: TimeZone) { self.timeZone = timeZone }

    /// Seconds since 1970 in local time.
    private mutating func local(_ date: Date) -> Int {
        let t = Int(date.timeIntervalSince1970.rounded(.down))
        let h = t >= 0 ? t / 3600 : (t - 3599) / 3600
        if h != hour {
            hour = h
            offset = timeZone.secondsFromGMT(for: date)
        }
        return t + offset
    }

    /// `HH:MM:SS`.
    mutating func time(_ date: Date) -> String {
        let t = local(date)
        let s = ((t % 86_400) + 86_400) % 86_400
        return Self.two(s / 3600) + ":" + Self.two(s / 60 % 60) + ":" + Self.two(s % 60)
    }

    /// `YYYY-MM-DD`.
    mutating func day(_ date: Date) -> String {
        let t = local(date)
        let days = t >= 0 ? t / 86_400 : (t - 86_399) / 86_400
        let (y, m, d) = TranscriptTime.civilFromDays(days)
        return String(y) + "-" + Self.two(m) + "-" + Self.two(d)
    }

    /// `Mon 2026-11-30 10:00`.
    mutating func minute(_ date: Date) -> String {
        let t = local(date)
        let days = t >= 0 ? t / 86_400 : (t - 86_399) / 86_400
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        let s = t - days * 86_400
        return weekday + " " + day(date) + " " + Self.two(s / 3600) + ":" + Self.two(s / 60 % 60)
    }

    private static func two(_ v: Int) -> String { v < 10 ? "0" + String(v) : String(v) }
}
