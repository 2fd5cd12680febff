import Foundation
import UsherJSON

/// A byte buffer that report writers fill one conversation at a time and hand to a
/// `ReportOutput` in one piece. A value on the writer's stack: appending costs no reference
/// counting, no exclusivity check and no intermediate `String`. JSON goes through the project's
/// one `JSONWriter`, which holds the bytes; text, HTML and times are written here.
struct ReportBytes {
    private var w: JSONWriter

    init(capacity: Int = 4096) { w = JSONWriter(capacity: capacity) }

    var bytes: [UInt8] { w.bytes }
    var isEmpty: Bool { w.bytes.isEmpty }
    mutating func removeAll() { w.reset() }

    /// Text as it is.
    mutating func raw(_ s: StaticString) { w.raw(s) }

    /// Text as it is.
    mutating func text(_ s: String) {
        var s = s
        s.withUTF8 { w.bytes.append(contentsOf: $0) }
    }

    mutating func int(_ n: Int) { w.int(n) }

    mutating func bool(_ b: Bool) { w.bool(b) }

    /// `s` as a JSON string literal, quotes included.
    mutating func json(_ s: String) { w.string(s) }

    /// A JSON string or `null`.
    mutating func json(_ s: String?) {
        if let s { w.string(s) } else { w.null() }
    }

    /// A JSON array of strings, `[a, b]`.
    mutating func json(_ a: [String]) {
        w.byte(0x5B)
        for (i, s) in a.enumerated() {
            if i > 0 { w.raw(", ") }
            w.string(s)
        }
        w.byte(0x5D)
    }

    /// `s` escaped for HTML text and attribute values (`& < > " '`).
    mutating func html(_ s: String) {
        var s = s
        s.withUTF8 { u in
            var from = 0
            var i = 0
            while i < u.count {
                let b = u[i]
                if b == 0x26 || b == 0x3C || b == 0x3E || b == 0x22 || b == 0x27 {
                    if from < i { w.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[from..<i])) }
                    switch b {
                    case 0x26: raw("&amp;")
                    case 0x3C: raw("&lt;")
                    case 0x3E: raw("&gt;")
                    case 0x22: raw("&quot;")
                    default: raw("&#39;")
                    }
                    from = i + 1
                }
                i += 1
            }
            if from < u.count { w.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[from..<u.count])) }
        }
    }

    /// `s` on one line: each run of white space and control characters becomes one space (none
    /// at the ends), and text longer than `maxScalars` Unicode scalars is cut to fewer and ends
    /// in "…". Reads only as much of `s` as it writes.
    mutating func flattened(_ s: String, maxScalars: Int) {
        var s = s
        s.withUTF8 { u in
            var n = 0
            var i = 0
            var pendingSpace = false
            while i < u.count {
                if u[i] <= 0x20 || u[i] == 0x7F {
                    pendingSpace = n > 0
                    i += 1
                    continue
                }
                // A run of visible characters [i, j) of `scalars` Unicode scalars.
                var j = i
                var scalars = 0
                while j < u.count, u[j] > 0x20, u[j] != 0x7F {
                    if u[j] & 0xC0 != 0x80 { scalars += 1 }
                    j += 1
                }
                let space = pendingSpace ? 1 : 0
                let total = n + space + scalars
                if total < maxScalars || (total == maxScalars && !Self.hasVisible(u, from: j)) {
                    if pendingSpace { w.bytes.append(0x20) }
                    w.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[i..<j]))
                    n = total
                    pendingSpace = false
                    i = j
                    continue
                }
                // The limit falls inside this run: as much as fits before "…".
                let room = maxScalars - 1 - n - space
                if room > 0 {
                    if pendingSpace { w.bytes.append(0x20) }
                    var k = i
                    var taken = 0
                    while k < j {
                        if u[k] & 0xC0 != 0x80 {
                            if taken == room { break }
                            taken += 1
                        }
                        k += 1
                    }
                    w.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: u[i..<k]))
                }
                w.bytes.append(contentsOf: [0xE2, 0x80, 0xA6])   // …
                return
            }
        }
    }

    private static func hasVisible(_ u: UnsafeBufferPointer<UInt8>, from: Int) -> Bool {
        var i = from
        while i < u.count {
            if u[i] > 0x20, u[i] != 0x7F { return true }
            i += 1
        }
        return false
    }

    /// An RFC 3339 time in UTC, as `TranscriptTime.format` writes it.
    mutating func time(_ date: Date) {
        let t = date.timeIntervalSince1970
        var whole = Int(t.rounded(.down))
        var millis = Int(((t - Double(whole)) * 1000).rounded())
        if millis == 1000 { whole += 1; millis = 0 }
        let days = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let secs = whole - days * 86_400
        let (y, m, d) = TranscriptTime.civilFromDays(days)
        digits(y, 4); w.bytes.append(0x2D); digits(m, 2); w.bytes.append(0x2D); digits(d, 2); w.bytes.append(0x54)
        digits(secs / 3600, 2); w.bytes.append(0x3A); digits(secs / 60 % 60, 2); w.bytes.append(0x3A); digits(secs % 60, 2)
        if millis > 0 { w.bytes.append(0x2E); digits(millis, 3) }
        w.bytes.append(0x5A)
    }

    /// `v` in exactly `width` digits (0 ≤ v, more digits when it does not fit).
    mutating func digits(_ v: Int, _ width: Int) {
        var p = 1
        for _ in 1..<width { p *= 10 }
        if v >= p * 10 { int(v); return }
        var v = v
        while p > 0 {
            w.bytes.append(0x30 + UInt8(v / p))
            v %= p
            p /= 10
        }
    }
}
