import Foundation

/// Escaping for HTML text and attribute values (and SVG, which is XML): `& < > " '`.
enum HTMLText {
    static func escape(_ s: String) -> String {
        var needs = false
        for b in s.utf8 where b == 0x26 || b == 0x3C || b == 0x3E || b == 0x22 || b == 0x27 { needs = true; break }
        guard needs else { return s }
        var out = ""
        out.reserveCapacity(s.utf8.count + 16)
        for ch in s.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}

/// The charts of the HTML report, drawn as inline SVG (no script, no external asset): they
/// scale with the page and print sharply.
enum HTMLCharts {
    /// Horizontal bars: hits per rule, most first; rules that never fired get an empty bar
    /// marked "never".
    static func ruleBars(_ hits: [(rule: String, hits: Int)], never: [String], title: String) -> String {
        let rows = hits.map { ($0.rule, $0.hits) } + never.map { ($0, 0) }
        let labelWidth = min(220, max(90, (rows.map(\.0.count).max() ?? 8) * 7 + 16))
        let barArea = 640 - labelWidth - 70
        let rowHeight = 24
        let height = max(1, rows.count) * rowHeight + 8
        let top = max(1, rows.map(\.1).max() ?? 1)
        var s = "<svg class=\"chart-svg\" viewBox=\"0 0 640 \(height)\" width=\"640\" height=\"\(height)\" role=\"img\" aria-label=\"\(HTMLText.escape(title))\" xmlns=\"http://www.w3.org/2000/svg\">"
        s += "<title>\(HTMLText.escape(title))</title>"
        for (i, row) in rows.enumerated() {
            let y = 4 + i * rowHeight
            let label = row.0.count > 30 ? String(row.0.prefix(29)) + "…" : row.0
            s += "<text x=\"\(labelWidth - 8)\" y=\"\(y + 16)\" text-anchor=\"end\" class=\"lbl\">\(HTMLText.escape(label))</text>"
            if row.1 > 0 {
                let w = max(2, Int((Double(row.1) / Double(top) * Double(barArea)).rounded()))
                s += "<rect x=\"\(labelWidth)\" y=\"\(y + 3)\" width=\"\(w)\" height=\"\(rowHeight - 8)\" rx=\"3\" class=\"\(row.0 == "fallback" ? "bar-fallback" : "bar")\"><title>\(HTMLText.escape(row.0)): \(row.1)</title></rect>"
                s += "<text x=\"\(labelWidth + w + 6)\" y=\"\(y + 16)\" class=\"val\">\(row.1)</text>"
            } else {
                s += "<rect x=\"\(labelWidth)\" y=\"\(y + 3)\" width=\"\(barArea)\" height=\"\(rowHeight - 8)\" rx=\"3\" class=\"bar-never\"/>"
                s += "<text x=\"\(labelWidth + 8)\" y=\"\(y + 16)\" class=\"never\">never fired</text>"
            }
        }
        return s + "</svg>"
    }

    /// Vertical bars: one per bin, labelled below, counts above.
    static func histogram(_ bins: [(label: String, value: Int, muted: Bool)], title: String, xTitle: String) -> String {
        let width = 640, height = 240
        let left = 40, right = 12, top = 18, bottom = 46
        let plotW = width - left - right, plotH = height - top - bottom
        let (peak, step) = niceScale(max(1, bins.map(\.value).max() ?? 1))
        let slot = bins.isEmpty ? plotW : plotW / bins.count
        let barW = max(4, min(56, slot * 7 / 10))
        var s = "<svg class=\"chart-svg\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" role=\"img\" aria-label=\"\(HTMLText.escape(title))\" xmlns=\"http://www.w3.org/2000/svg\">"
        s += "<title>\(HTMLText.escape(title))</title>"
        // Grid lines at round values.
        for k in 0...(peak / step) {
            let v = k * step
            let y = top + plotH - plotH * v / peak
            s += "<line x1=\"\(left)\" x2=\"\(width - right)\" y1=\"\(y)\" y2=\"\(y)\" class=\"grid\"/>"
            s += "<text x=\"\(left - 6)\" y=\"\(y + 4)\" text-anchor=\"end\" class=\"axis\">\(v)</text>"
        }
        for (i, bin) in bins.enumerated() {
            let h = bin.value == 0 ? 0 : max(2, Int((Double(bin.value) / Double(peak) * Double(plotH)).rounded()))
            let x = left + i * slot + (slot - barW) / 2
            let y = top + plotH - h
            if h > 0 {
                s += "<rect x=\"\(x)\" y=\"\(y)\" width=\"\(barW)\" height=\"\(h)\" rx=\"3\" class=\"\(bin.muted ? "bar-muted" : "bar")\"><title>\(HTMLText.escape(bin.label)): \(bin.value)</title></rect>"
            }
            s += "<text x=\"\(x + barW / 2)\" y=\"\(y - 5)\" text-anchor=\"middle\" class=\"val\">\(bin.value)</text>"
            s += "<text x=\"\(x + barW / 2)\" y=\"\(top + plotH + 16)\" text-anchor=\"middle\" class=\"axis\">\(HTMLText.escape(bin.label))</text>"
        }
        s += "<text x=\"\(left + plotW / 2)\" y=\"\(height - 8)\" text-anchor=\"middle\" class=\"axis-title\">\(HTMLText.escape(xTitle))</text>"
        return s + "</svg>"
    }

    /// An axis maximum and a step of 1, 2 or 5 × 10ⁿ giving at most five steps.
    static func niceScale(_ peak: Int) -> (top: Int, step: Int) {
        var magnitude = 1
        while true {
            for m in [1, 2, 5] {
                let step = m * magnitude
                if (peak + step - 1) / step <= 5 { return ((peak + step - 1) / step * step, step) }
            }
            magnitude *= 10
        }
    }
}
