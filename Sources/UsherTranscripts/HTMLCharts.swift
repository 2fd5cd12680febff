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

/// The charts of the HTML report, without script or external asset: bars in HTML and a
/// histogram in inline SVG, both scaling with the page and printing sharply.
enum HTMLCharts {
    /// The shortest bar drawn for a count above zero, in the histogram's units: one beside
    /// thousands must still show (the chart scales down by half on a phone).
    static let minimumBar = 6

    /// A bar's length for `value` on a scale where `top` is `full` long: at least
    /// `minimumBar` for any value above zero.
    static func barLength(_ value: Int, of top: Int, full: Int) -> Int {
        value <= 0 ? 0 : max(minimumBar, Int((Double(value) / Double(max(1, top)) * Double(full)).rounded()))
    }

    /// Horizontal bars: hits per rule, most first; rules that never fired get an empty bar
    /// marked "never fired". HTML, not SVG: the labels keep their size and the bars their
    /// share of whatever width there is, from a phone to a wide screen. `top`: the count a full
    /// bar stands for (by default the largest here; two bots' charts share one so that they
    /// compare).
    static func ruleBars(_ hits: [(rule: String, hits: Int)], never: [String], title: String, top: Int? = nil) -> String {
        let rows = hits.map { ($0.rule, $0.hits) } + never.map { ($0, 0) }
        let top = max(1, top ?? rows.map(\.1).max() ?? 1)
        var s = "<div class=\"bars\" role=\"img\" aria-label=\"\(HTMLText.escape(title))\">"
        for (rule, n) in rows {
            s += "<span class=\"lbl\" title=\"\(HTMLText.escape(rule))\">\(HTMLText.escape(rule))</span>"
            if n > 0 {
                // A percentage with a floor in CSS (`min-width`): one hit beside thousands shows.
                let share = Double(n) / Double(top) * 100
                s += "<span class=\"track\"><span class=\"\(rule == "fallback" ? "bar bar-fallback" : "bar")\" style=\"width:\(String(format: "%.1f", share))%\" title=\"\(HTMLText.escape(rule)): \(n)\"></span></span>"
                s += "<span class=\"val\">\(n)</span>"
            } else {
                s += "<span class=\"track never\">never fired</span><span class=\"val\"></span>"
            }
        }
        return s + "</div>"
    }

    /// Vertical bars: one per bin, labelled below, counts above. `top`: the count the axis
    /// must reach (by default the largest bin).
    static func histogram(_ bins: [(label: String, value: Int, muted: Bool)], title: String, xTitle: String, top peakValue: Int? = nil) -> String {
        let width = 480, height = 220
        let left = 40, right = 12, top = 18, bottom = 46
        let plotW = width - left - right, plotH = height - top - bottom
        let (peak, step) = niceScale(max(1, peakValue ?? bins.map(\.value).max() ?? 1))
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
            let h = barLength(bin.value, of: peak, full: plotH)
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
