public import Foundation

/// Durations as support leads write them: `30s`, `10m`, `2h`, `1d`, `1w`, or combinations like
/// `1h30m`.
public enum DurationText {
    /// Seconds, or `nil` when `s` is not a duration.
    public static func parse(_ s: String) -> TimeInterval? {
        var total: TimeInterval = 0
        var number = ""
        var sawUnit = false
        for ch in s {
            if ch.isASCII, ch.isNumber {
                number.append(ch)
                continue
            }
            guard let n = Double(number) else { return nil }
            let unit: TimeInterval
            switch ch {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86_400
            case "w": unit = 604_800
            default: return nil
            }
            total += n * unit
            number = ""
            sawUnit = true
        }
        guard number.isEmpty, sawUnit, total < 3.2e9 else { return nil }
        return total
    }

    /// The shortest form that `parse` reads back: `90` → `1m30s`.
    public static func format(_ t: TimeInterval) -> String {
        let s = Int(t.rounded())
        if s < 60 { return "\(s)s" }
        if s < 3600 { return s % 60 == 0 ? "\(s / 60)m" : "\(s / 60)m\(s % 60)s" }
        if s < 86_400 { return s % 3600 == 0 ? "\(s / 3600)h" : "\(s / 3600)h\((s % 3600) / 60)m" }
        return s % 86_400 == 0 ? "\(s / 86_400)d" : "\(s / 86_400)d\((s % 86_400) / 3600)h"
    }
}
