import UsherDiagnostics
import UsherYAML

/// Parses one entry of `schedules:` — weekday keys (`mon`, `mon-fri`, `daily`) mapped to
/// `"HH:MM-HH:MM"` windows (or a list of them, or `closed`), plus `except: [YYYY-MM-DD, …]`.
struct ScheduleParser {
    let reader: NodeReader

    func parse(name: String, _ node: YAMLNode) -> Schedule? {
        guard let pairs = node.mapping else {
            reader.error("wrong-type", "expected schedule '\(name)' as a mapping of days to hours, like 'mon-fri: \"09:00-18:00\"', found \(node.kindName)", at: node)
            return nil
        }
        var ok = true
        var windows = [[Schedule.Window]](repeating: [], count: 7)
        var closed: Set<Schedule.Day> = []
        let dayKeys = Schedule.weekdayNames + ["daily", "weekdays", "weekends", "mon-fri", "sat-sun"]
        for pair in pairs {
            guard let key = pair.key.scalar else { continue }
            if key == "except" {
                guard let items = reader.texts(pair.value, "'except'") else { ok = false; continue }
                for (text, itemNode) in items {
                    if let day = Self.parseDate(text) { closed.insert(day) } else {
                        reader.error("invalid-date", "'\(text)' is not a date; write it as YYYY-MM-DD, like 2026-12-25", at: itemNode)
                        ok = false
                    }
                }
                continue
            }
            guard let days = Self.parseDays(key) else {
                reader.error("invalid-day", "'\(key)' is not a day or range of days" + Suggestion.hint(for: key, in: dayKeys + ["except"], otherwise: "use mon, tue, wed, thu, fri, sat, sun, a range like mon-fri, daily, or except"), at: pair.key)
                ok = false
                continue
            }
            guard let items = reader.texts(pair.value, "'\(key)'") else { ok = false; continue }
            for (text, itemNode) in items {
                if text == "closed" { continue }
                guard let w = Self.parseWindow(text) else {
                    reader.error("invalid-time", Self.windowProblem(text), at: itemNode)
                    ok = false
                    continue
                }
                for d in days { windows[d].append(w) }
            }
        }
        return ok ? Schedule(name: name, windows: windows, closedDays: closed) : nil
    }

    static func parseDays(_ key: String) -> [Int]? {
        switch key {
        case "daily": return Array(0...6)
        case "weekdays": return Array(0...4)
        case "weekends": return [5, 6]
        default: break
        }
        let parts = key.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard let a = Schedule.weekdayNames.firstIndex(of: parts[0]) else { return nil }
        if parts.count == 1 { return [a] }
        guard parts.count == 2, let b = Schedule.weekdayNames.firstIndex(of: parts[1]) else { return nil }
        var out = [a]
        var d = a
        while d != b { d = (d + 1) % 7; out.append(d) }
        return out
    }

    /// What is wrong with a window that does not parse. One written as HH:MM-HH:MM is told
    /// which time is wrong, not shown the format it already has.
    static func windowProblem(_ s: String) -> String {
        let parts = s.replacingOccurrences(of: " ", with: "").split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        let shaped = parts.count == 2 && parts.allSatisfy { $0.wholeMatch(of: /\d{1,2}:\d{2}/) != nil }
        guard shaped else {
            return "'\(s)' is not a time window; write it as \"HH:MM-HH:MM\" (24-hour clock), like \"09:00-18:00\""
        }
        if parseTime(parts[0], allow24: false) == nil {
            return parts[0].hasPrefix("24") ? "'\(s)' starts at 24:00, which is the end of a day; start at 00:00"
                : "'\(parts[0])' in '\(s)' is not a time of day; hours go from 00 to 23, minutes from 00 to 59"
        }
        if parseTime(parts[1], allow24: true) == nil {
            return "'\(parts[1])' in '\(s)' is not a time of day; hours go from 00 to 24 (24:00 only as an end), minutes from 00 to 59"
        }
        return "'\(s)' starts and ends at the same time, so it is empty; write the hours it is open, like \"09:00-18:00\""
    }

    /// `"09:00-18:00"`; an end before the start runs past midnight; `24:00` is allowed as an end.
    static func parseWindow(_ s: String) -> Schedule.Window? {
        let parts = s.replacingOccurrences(of: " ", with: "").split(separator: "-").map(String.init)
        guard parts.count == 2, let a = parseTime(parts[0], allow24: false),
              let b = parseTime(parts[1], allow24: true), a != b else { return nil }
        return Schedule.Window(start: a, end: b > a ? b : b + 1440)
    }

    static func parseTime(_ s: String, allow24: Bool) -> Int? {
        let hm = s.split(separator: ":")
        guard hm.count == 2, (1...2).contains(hm[0].count), hm[1].count == 2,
              let h = Int(hm[0]), let m = Int(hm[1]), (0...59).contains(m) else { return nil }
        if h == 24, m == 0, allow24 { return 1440 }
        guard (0...23).contains(h) else { return nil }
        return h * 60 + m
    }

    static func parseDate(_ s: String) -> Schedule.Day? {
        let p = s.split(separator: "-")
        guard p.count == 3, p[0].count == 4, p[1].count == 2, p[2].count == 2,
              let y = Int(p[0]), let m = Int(p[1]), let d = Int(p[2]),
              (1...12).contains(m) else { return nil }
        let daysInMonth = [31, (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...daysInMonth[m - 1]).contains(d) else { return nil }
        return Schedule.Day(year: y, month: m, day: d)
    }
}
