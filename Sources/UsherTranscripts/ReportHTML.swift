import Foundation
import UsherEngine

/// `usher replay --format html`: one self-contained page (no external asset; a Content
/// Security Policy forbids loading any): the summary, inline SVG charts (hits per rule, the
/// customer message at which handoffs happen), and every conversation as chat bubbles —
/// customer on the left, the bot on the right labelled with its rule, agents in their own
/// colour, system notices centred. A small inline script filters the conversations by a text
/// box; without it the page reads the same, all conversations listed.
///
/// Every text from a transcript or a rule file is escaped. Conversations are spooled to an
/// unnamed temporary file while the replay runs, because the summary comes first on the page
/// and is known only at the end.
public struct ReportHTML: ReplayReportWriter {
    private let out: ReportOutput
    private let spool: ReportOutput
    private let conversations: Bool
    private var header: ReplayHeader?
    private var clock = ReportLocalTime(TimeZone(identifier: "UTC")!)
    private var count = 0
    /// Conversations shown open when the page loads.
    private let openFirst = 3

    /// - Parameter conversations: list every conversation; `false` shows the summary only.
    public init(_ out: ReportOutput, conversations: Bool = true) throws(ReportOutputError) {
        self.out = out
        self.conversations = conversations
        spool = try ReportOutput.temporary()
    }

    public mutating func begin(_ h: ReplayHeader) {
        header = h
        clock = ReportLocalTime(h.bot.timeZone)
    }

    // MARK: Conversations

    public mutating func add(_ c: ReplayConversation) {
        guard conversations, let header else { return }
        count += 1
        var w = ReportBytes(capacity: 8192)
        let handoff = c.handoffs.first
        let spoke = c.spokeOverHuman
        let diffs = header.against == nil ? 0 : c.differences
        w.text("<details class=\"conv\" id=\"conv-\(count)\" data-handoff=\"\(handoff == nil ? 0 : 1)\" data-spoke=\"\(spoke)\" data-diff=\"\(diffs)\"\(count <= openFirst ? " open" : "")>\n<summary><span class=\"cid\">")
        w.html(c.id)
        w.text("</span>")
        if c.part > 1 { w.text(" <span class=\"part\">part \(c.part)</span>") }
        w.text("<span class=\"facts\">")
        w.text("<span class=\"fact\">\(c.customerMessages) customer msg\(c.customerMessages == 1 ? "" : "s")</span>")
        w.text("<span class=\"fact\">\(c.replies) repl\(c.replies == 1 ? "y" : "ies")</span>")
        if let h = handoff {
            w.text("<span class=\"chip chip-handoff\">handoff at #\(h.customerMessage) · ")
            w.html(h.reason)
            w.text("</span>")
        }
        if let t = c.takeover, let step = c.steps.indices.contains(t) ? c.steps[t] : nil, step.bot?.ownerBefore == .bot {
            w.text("<span class=\"chip chip-agent\">agent took over</span>")
        }
        if spoke > 0 { w.text("<span class=\"chip chip-warn\">spoke over a human ×\(spoke)</span>") }
        if diffs > 0 { w.text("<span class=\"chip chip-diff\">\(diffs) difference\(diffs == 1 ? "" : "s")</span>") }
        w.text("</span><span class=\"src\">")
        w.html((c.file.split(separator: "/").last.map(String.init) ?? c.file) + ":\(c.line)")
        w.text("</span></summary>\n<div class=\"chat\">\n")
        var day = ""
        var session = 1
        for step in c.steps {
            let m = step.message
            if let o = step.bot, o.session > session {
                session = o.session
                w.text("<div class=\"day session\">session \(session): new after \(HTMLText.escape(header.bot.idleResetText ?? "a reset")) of silence</div>\n")
            }
            let d = clock.day(m.at)
            if d != day {
                day = d
                w.text("<div class=\"day\">\(d)</div>\n")
            }
            message(step, &w)
            if let o = step.bot { decision(o, step: step, other: nil, &w) }
            if step.differs, let a = step.against { decision(a, step: step, other: header.names.against ?? "other", &w) }
        }
        w.text("</div>\n</details>\n")
        spool.write(&w)
    }

    private mutating func message(_ step: ReplayStep, _ w: inout ReportBytes) {
        let m = step.message
        let time = clock.time(m.at)
        switch m.from {
        case .system:
            w.text("<div class=\"sys recorded\"><span>")
            w.html(m.text)
            w.text("</span><small>recorded system notice · \(time)</small></div>\n")
        default:
            let (cls, who): (String, String) = switch m.from {
            case .customer: ("customer", "customer" + (step.customerMessage.map { " #\($0)" } ?? ""))
            case .agent: ("agent", (m.senderName ?? "agent") + (m.senderName == nil ? "" : " · agent") + (step.bot == nil ? " · not given to the bot" : ""))
            default: ("recbot", (m.senderName ?? "bot") + " · recorded bot message")
            }
            w.text("<div class=\"msg \(cls)\"><div class=\"bubble\">")
            w.html(m.text)
            w.text("</div><div class=\"meta\">")
            if m.from == .customer, let name = m.senderName {
                w.html(name)
                w.text(" · ")
            }
            w.html(who)
            w.text(" · \(time)</div></div>\n")
        }
    }

    /// The bot's (or the other bot's) effects under a message.
    private func decision(_ o: ReplayOutcome, step: ReplayStep, other: String?, _ w: inout ReportBytes) {
        let side = other == nil ? "bot" : "other"
        func label(_ rule: String) {
            w.text("<span class=\"rule\">")
            if let other { w.html(other); w.text(": ") }
            w.html(rule)
            w.text("</span>")
        }
        switch o.outcome {
        case .ignored: return
        case .takeover:
            if o.tookOver { w.text("<div class=\"event takeover\">an agent took over — the bot is silent from here</div>\n") }
            return
        case let .silent(owner):
            w.text("<div class=\"quiet \(side)\">\(other.map { HTMLText.escape($0) + ": " } ?? "")bot silent · \(owner == .agent ? "an agent owns the conversation" : "waiting for an agent")</div>\n")
            return
        case .noMatch:
            w.text("<div class=\"quiet \(side)\">\(other.map { HTMLText.escape($0) + ": " } ?? "")no rule fired and there is no fallback</div>\n")
            return
        case .fired, .fallback:
            break
        }
        let warn = other == nil && step.humanHadWritten
        var chips: [String] = []
        for e in o.effects {
            switch e {
            case let .reply(t, r, q):
                w.text("<div class=\"msg \(side)\(warn ? " warn" : "")\"><div class=\"bubble\">")
                w.html(t)
                w.text("</div>")
                if !q.isEmpty {
                    w.text("<div class=\"quick\">")
                    for item in q {
                        if let url = item.url {
                            w.text("<a class=\"qr\" href=\"\(HTMLText.escape(url))\" rel=\"noopener noreferrer\">\(HTMLText.escape(item.title)) ↗</a>")
                        } else {
                            w.text("<span class=\"qr\">\(HTMLText.escape(item.title))</span>")
                        }
                    }
                    w.text("</div>")
                }
                w.text("<div class=\"meta\">")
                label(r)
                if warn { w.text(" <span class=\"warn-label\">⚠ a human had already written</span>") }
                w.text("</div></div>\n")
            case let .system(t, r):
                w.text("<div class=\"sys \(side)\(warn ? " warn" : "")\"><span>")
                w.html(t)
                w.text("</span><small>system notice · ")
                label(r)
                if warn { w.text(" <span class=\"warn-label\">⚠ a human had already written</span>") }
                w.text("</small></div>\n")
            case let .handoff(reason, q, p, _):
                chips.append("<span class=\"chip chip-handoff\">handoff · \(HTMLText.escape(reason)) → \(HTMLText.escape(q))\(p == .normal ? "" : " · " + p.rawValue)</span>")
            case let .notify(t, q, _, _):
                chips.append("<span class=\"chip\" title=\"\(HTMLText.escape(t))\">notify \(HTMLText.escape(q))</span>")
            case let .tag(t): chips.append("<span class=\"chip\">tag \(HTMLText.escape(t))</span>")
            case let .untag(t): chips.append("<span class=\"chip\">untag \(HTMLText.escape(t))</span>")
            case let .set(k, v): chips.append("<span class=\"chip\" title=\"\(HTMLText.escape(v))\">set \(HTMLText.escape(k))</span>")
            }
        }
        if o.effects.isEmpty { chips.append("<span class=\"chip\">\(HTMLText.escape(o.fired.joined(separator: ", "))) fired, no effects</span>") }
        if !chips.isEmpty {
            w.text("<div class=\"effects \(side)\">\(other.map { "<span class=\"rule\">" + HTMLText.escape($0) + "</span>" } ?? "")\(chips.joined())</div>\n")
        }
    }

    // MARK: The page

    public mutating func end(_ r: ReplayResult) {
        guard let h = header else { return }
        let s = r.summary
        // Two versions of one bot share an id: the report names them by their folders.
        let names = h.names
        // Each side's cards and charts, the other bot's (`--against`) after the bot's.
        var sides = [Side(name: names.bot, summary: s, other: false)]
        if let a = r.againstSummary { sides.append(Side(name: names.against ?? a.bot, summary: a, other: true)) }
        out.write("""
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
        <meta name="generator" content="usher replay">
        <title>Replay of \(HTMLText.escape(names.bot))\(names.against.map { " against " + HTMLText.escape($0) } ?? "")</title>
        <style>\(Self.css)</style>
        </head>
        <body>
        <header class="top"><div class="wrap">
        <h1>Replay of <code>\(HTMLText.escape(names.bot))</code>\(names.against.map { " against <code>\(HTMLText.escape($0))</code>" } ?? "")</h1>
        <p class="sub">\(HTMLText.escape(h.bot.name)) · rule set <code>\(HTMLText.escape(h.bot.version))</code> · \(h.bot.rules) rules · \(h.transcripts.count) transcript\(h.transcripts.count == 1 ? "" : "s"): \(h.transcripts.map { "<code>" + HTMLText.escape($0) + "</code>" }.joined(separator: ", "))</p>
        <p class="sub">\(h.options.agents == .takeover ? "Recorded agent messages take over, as in the worker." : "Recorded agent messages are not given to the bot (<code>--ignore-agents</code>): it answers as if alone.") Times in \(HTMLText.escape(h.bot.timeZone.identifier)). The bot's messages are what it <em>would</em> have written; the recording is unchanged.</p>
        </div></header>
        <main class="wrap">

        """)
        for side in sides { cards(side, r, named: sides.count > 1) }
        charts(sides)
        details(s, h, r)
        if let d = r.diff, let other = h.names.against { differences(d, bot: h.names.bot, other: other) }
        if conversations {
            out.write("""
            <section id="conversations"><h2>Conversations <span class="muted" id="shown">\(count)</span></h2>
            <div class="filter" id="filter" hidden>
            <input type="search" id="q" placeholder="Filter by conversation id, message text or rule…" aria-label="Filter conversations">
            <select id="only" aria-label="Show only"><option value="">all conversations</option><option value="handoff">with a handoff</option><option value="spoke">spoke over a human</option>\(h.against == nil ? "" : "<option value=\"diff\">with differences</option>")</select>
            <button type="button" id="expand">expand all</button><button type="button" id="collapse">collapse all</button>
            </div>
            <div class="legend"><span class="lg lg-customer">customer</span><span class="lg lg-bot">bot (would say) · rule</span><span class="lg lg-agent">agent (recorded)</span><span class="lg lg-recbot">bot (recorded)</span>\(h.names.against.map { "<span class=\"lg lg-other\">\(HTMLText.escape($0)) where it differs</span>" } ?? "")<span class="lg lg-sys">system notice</span></div>

            """)
            out.append(contentsOf: spool)
            out.write("<p class=\"muted\" id=\"none\" hidden>No conversation matches.</p>\n</section>\n")
        }
        out.write("</main>\n<footer class=\"wrap\">Generated by <code>usher replay</code>. \(r.records) records read\(r.skippedLines > 0 ? ", \(r.skippedLines) bad lines skipped" : "")\(r.duplicates > 0 ? ", \(r.duplicates) duplicates ignored" : "").</footer>\n")
        out.write("<script>\(Self.script)</script>\n</body>\n</html>\n")
        out.flush()
    }

    /// One bot's numbers in a report: the bot's own, or the other bot's (`--against`).
    private struct Side {
        var name: String
        var summary: ReplaySummary
        var other: Bool
        var cssClass: String { other ? "side-other" : "side-bot" }
    }

    private func cards(_ side: Side, _ r: ReplayResult, named: Bool) {
        let s = side.summary
        func card(_ value: String, _ label: String, _ note: String = "", cls: String = "") {
            out.write("<div class=\"card \(cls)\"><div class=\"v\">\(value)</div><div class=\"l\">\(label)</div>\(note.isEmpty ? "" : "<div class=\"n\">\(note)</div>")</div>\n")
        }
        if named { out.write("<h2 class=\"side-name \(side.cssClass)\"><code>\(HTMLText.escape(side.name))</code></h2>\n") }
        out.write("<section class=\"cards \(side.cssClass)\">\n")
        card(Self.grouped(s.conversations), "conversations", "\(Self.grouped(s.customerMessages)) customer messages")
        card(Self.grouped(s.replies), "bot replies", "in \(Self.grouped(s.conversationsWithReplies)) conversations")
        let rate = s.conversations == 0 ? 0 : Int((Double(s.conversationsHandedOff) / Double(s.conversations) * 100).rounded())
        card(Self.grouped(s.handoffs), "handoffs", "\(rate)% of conversations")
        card(Self.grouped(s.spokeOverHuman), "spoke over a human", "in \(Self.grouped(s.spokeOverConversations)) conversations", cls: s.spokeOverHuman > 0 ? "warn" : "")
        let never = s.ruleCount - s.rulesFired
        card("\(s.rulesFired)/\(s.ruleCount)", "rules fired", "\(never) never fired" + (s.fallbackUsed ? "; the fallback answered" : ""),
             cls: never == 0 ? "" : "muted-card")
        if !side.other, let d = r.diff { card(Self.grouped(d.messages), "differences", "in \(Self.grouped(d.conversations)) conversations", cls: "diff") }
        out.write("</section>\n")
    }

    /// Each side's two charts, on one scale per chart so that the sides compare at a glance.
    private func charts(_ sides: [Side]) {
        let last = max(4, sides.compactMap { $0.summary.handoffPositions.keys.max() }.max() ?? 0)
        let histograms = sides.map { side -> [(label: String, value: Int, muted: Bool)] in
            let s = side.summary, positions = s.handoffPositions
            var bins: [(label: String, value: Int, muted: Bool)] = (1...last).map { ("#\($0)", positions[$0] ?? 0, false) }
            if let unknown = positions[0] { bins.insert(("?", unknown, true), at: 0) }
            bins.append(("none", s.conversations - s.conversationsHandedOff, true))
            return bins
        }
        let hitsTop = sides.flatMap { $0.summary.rulesByHits.map(\.hits) }.max() ?? 1
        let binsTop = histograms.flatMap { $0.map(\.value) }.max() ?? 1
        out.write("<section class=\"charts\">\n")
        for (side, bins) in zip(sides, histograms) {
            let of = sides.count > 1 ? " · <code>\(HTMLText.escape(side.name))</code>" : ""
            let s = side.summary
            out.write("<figure class=\"chart \(side.cssClass)\"><figcaption>Hits per rule\(of)</figcaption>\n")
            out.write(HTMLCharts.ruleBars(s.rulesByHits, never: s.neverFired, title: "Hits per rule", top: hitsTop))
            out.write("\n</figure>\n<figure class=\"chart \(side.cssClass)\"><figcaption>Handoffs by customer message of the session\(of)</figcaption>\n")
            out.write(HTMLCharts.histogram(bins, title: "Handoffs by customer message", xTitle: "customer message that brought the handoff (none: no handoff)",
                                           top: binsTop))
            out.write("\n</figure>\n")
        }
        out.write("</section>\n")
    }

    private func details(_ s: ReplaySummary, _ h: ReplayHeader, _ r: ReplayResult) {
        out.write("<section class=\"grid2\">\n<div class=\"panel\"><h2>Handoffs by reason</h2>\n")
        if s.handoffReasons.isEmpty {
            out.write("<p class=\"muted\">No handoffs.</p>")
        } else {
            out.write("<table><thead><tr><th>reason</th><th class=\"num\">handoffs</th></tr></thead><tbody>")
            for (reason, n) in s.handoffReasons { out.write("<tr><td><code>\(HTMLText.escape(reason))</code></td><td class=\"num\">\(Self.grouped(n))</td></tr>") }
            out.write("</tbody></table>")
        }
        out.write("\n<h2>Messages</h2><table><tbody>")
        out.write("<tr><td>customer messages</td><td class=\"num\">\(Self.grouped(s.customerMessages))</td></tr>")
        out.write("<tr><td>… rules evaluated</td><td class=\"num\">\(Self.grouped(s.decided))</td></tr>")
        out.write("<tr><td>… bot silent (waiting / agent)</td><td class=\"num\">\(Self.grouped(s.silentWaiting)) / \(Self.grouped(s.silentAgent))</td></tr>")
        out.write("<tr><td>agent messages</td><td class=\"num\">\(Self.grouped(s.agentMessages))</td></tr>")
        if h.options.agents == .takeover {
            out.write("<tr><td>… took over (before the bot handed off)</td><td class=\"num\">\(Self.grouped(s.takeovers)) (\(Self.grouped(s.takeoversBeforeHandoff)))</td></tr>")
        }
        out.write("<tr><td>system notices the bot would write</td><td class=\"num\">\(Self.grouped(s.systemNotices))</td></tr>")
        out.write("<tr><td>regex limits hit</td><td class=\"num\">\(Self.grouped(s.regexLimits.values.reduce(0, +)))</td></tr>")
        out.write("<tr><td>messages truncated for matching</td><td class=\"num\">\(Self.grouped(s.truncations))</td></tr>")
        out.write("</tbody></table>\n")
        if h.options.agents == .takeover, s.conversations >= 4, s.takeoversBeforeHandoff * 2 > s.conversations {
            out.write("<p class=\"note\">An agent wrote before the bot handed off in \(Self.grouped(s.takeoversBeforeHandoff)) of \(Self.grouped(s.conversations)) conversations, so the bot fell silent early. For recordings made without a bot, <code>--ignore-agents</code> shows what it would have done alone.</p>\n")
        }
        out.write("</div>\n<div class=\"panel\"><h2>Never fired <span class=\"muted\">\(s.neverFired.count)</span></h2>\n")
        if s.neverFired.isEmpty {
            out.write("<p class=\"muted\">Every rule fired at least once.</p>")
        } else {
            out.write("<p class=\"chips\">" + s.neverFired.map { "<code class=\"never-chip\">\(HTMLText.escape($0))</code>" }.joined(separator: " ") + "</p>")
        }
        out.write("\n<h2>Spoke over a human <span class=\"muted\">\(Self.grouped(s.spokeOverHuman))</span></h2>\n")
        if s.spokeOverExamples.isEmpty {
            out.write("<p class=\"muted\">\(h.options.agents == .takeover ? "None: recorded agents take over, so the bot is silent once one has written. <code>--ignore-agents</code> lists where it would have spoken." : "None.")</p>")
        } else {
            let byRule = s.spokeOverByRule.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            out.write("<p>" + byRule.prefix(8).map { "<code>\(HTMLText.escape($0.key))</code> \(Self.grouped($0.value))" }.joined(separator: " · ") + "</p><ul class=\"examples\">")
            for e in s.spokeOverExamples.prefix(6) {
                out.write("<li><b>\(HTMLText.escape(e.conversation))</b> #\(e.customerMessage.map(String.init) ?? "?"): “\(HTMLText.escape(Self.cut(e.text, 90)))” → <code>\(HTMLText.escape(e.rules.joined(separator: "+")))</code></li>")
            }
            out.write("</ul>")
        }
        if !s.regexLimits.isEmpty {
            out.write("\n<h2>Regex limits hit</h2><table><tbody>")
            for l in s.regexLimitHits {
                out.write("<tr><td><code>\(HTMLText.escape(l.limit.rule))</code> <code>\(HTMLText.escape(Self.cut(l.limit.pattern, 50)))</code> \(HTMLText.escape(l.limit.limit))</td><td class=\"num\">\(l.count)</td></tr>")
            }
            out.write("</tbody></table>")
        }
        if r.skippedLines > 0 {
            out.write("\n<h2>Skipped lines <span class=\"muted\">\(r.skippedLines)</span></h2><ul class=\"examples\">")
            for e in r.badLines { out.write("<li><code>\(HTMLText.escape(e.description))</code></li>") }
            out.write("</ul>")
        }
        out.write("\n</div>\n</section>\n")
    }

    private func differences(_ d: ReplayDiff, bot: String, other: String) {
        out.write("<section class=\"panel\"><h2>Differences: <code>\(HTMLText.escape(bot))</code> → <code>\(HTMLText.escape(other))</code> <span class=\"muted\">\(Self.grouped(d.messages)) messages in \(Self.grouped(d.conversations)) conversations, of \(Self.grouped(d.compared)) compared</span></h2>\n")
        if d.transitions.isEmpty {
            out.write("<p class=\"muted\">The two bots decide every message the same way.</p></section>\n")
            return
        }
        out.write("<table class=\"diff\"><thead><tr><th>transition</th><th class=\"num\">conversations</th><th class=\"num\">messages</th><th>examples</th></tr></thead><tbody>\n")
        for t in d.transitions {
            out.write("<tr><td><code>\(HTMLText.escape(t.from))</code> → <code>\(HTMLText.escape(t.to))</code>\(t.from == t.to ? " <span class=\"muted\">(other effects)</span>" : "")</td><td class=\"num\">\(t.conversations)</td><td class=\"num\">\(t.messages)</td><td>")
            for e in t.examples {
                out.write("<div class=\"ex\"><b>\(HTMLText.escape(e.conversation))</b> #\(e.customerMessage.map(String.init) ?? "?"): “\(HTMLText.escape(Self.cut(e.text, 80)))”<br><span class=\"muted\">\(HTMLText.escape(bot)):</span> \(HTMLText.escape(Self.brief(e.bot)))<br><span class=\"muted\">\(HTMLText.escape(other)):</span> \(HTMLText.escape(Self.brief(e.against)))</div>")
            }
            out.write("</td></tr>\n")
        }
        out.write("</tbody></table></section>\n")
    }

    private static func brief(_ o: ReplayOutcome) -> String {
        var s = o.label
        if let said = o.effects.lazy.compactMap({ e -> String? in
            switch e { case let .reply(t, _, _), let .system(t, _): t; default: nil }
        }).first { s += " “" + cut(said, 70) + "”" }
        if let h = o.handoff { s += " (handoff: \(h.reason))" }
        return s
    }

    private static func cut(_ s: String, _ n: Int) -> String {
        s.unicodeScalars.count <= n ? s : String(String.UnicodeScalarView(s.unicodeScalars.prefix(n - 1))) + "…"
    }

    /// `12,345`.
    static func grouped(_ n: Int) -> String {
        let digits = String(abs(n))
        var out = ""
        for (i, ch) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return n < 0 ? "-" + out : out
    }

    static let css = """
    :root{--bg:#f6f7f9;--panel:#fff;--ink:#1f2328;--muted:#656d76;--line:#d8dee4;--blue:#2563eb;--blue-soft:#e8effd;--green:#1a7f37;--agent:#0f766e;--agent-soft:#ddf4ef;--amber:#b45309;--amber-soft:#fff4e0;--purple:#7c3aed;--purple-soft:#f1eafe;--grey:#eef0f3}
    *{box-sizing:border-box}
    body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Helvetica Neue",Arial,sans-serif}
    code{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;background:var(--grey);padding:1px 5px;border-radius:4px}
    .wrap{max-width:1180px;margin:0 auto;padding:0 24px}
    header.top{background:#111827;color:#f9fafb;padding:22px 0 18px;margin-bottom:22px}
    header.top h1{margin:0 0 6px;font-size:22px;font-weight:650}
    header.top code{background:#374151;color:#f9fafb;font-size:18px}
    header.top .sub{margin:2px 0;color:#cbd5e1;font-size:13px}
    header.top .sub code{font-size:12px;padding:0 4px}
    h2{font-size:15px;margin:18px 0 8px;font-weight:650}
    .muted{color:var(--muted);font-weight:400}
    .cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(160px,100%),1fr));gap:12px;margin-bottom:16px}
    h2.side-name{margin:4px 0 8px} .cards.side-other .card{border-left:4px solid var(--purple)} .chart.side-other .chart-svg .bar{fill:var(--purple)}
    .card{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:14px 16px}
    .card .v{font-size:26px;font-weight:700;letter-spacing:-.01em}
    .card .l{font-weight:600}
    .card .n{color:var(--muted);font-size:12.5px}
    .card.warn .v{color:var(--amber)}
    .card.diff .v{color:var(--purple)}
    .charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(480px,100%),1fr));gap:12px;margin-bottom:12px}
    .chart{margin:0;min-width:0;background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
    .chart figcaption{font-weight:650;margin-bottom:6px}
    .chart-svg{width:100%;max-width:720px;height:auto;display:block}
    .chart-svg .bar{fill:var(--blue)} .chart-svg .bar-fallback{fill:#64748b} .chart-svg .bar-muted{fill:#cbd5e1} .chart-svg .bar-never{fill:#f3f4f6;stroke:#e5e7eb}
    .chart-svg text{font:12px system-ui,sans-serif;fill:var(--ink)} .chart-svg .val{fill:var(--muted)} .chart-svg .never{fill:#9ca3af;font-style:italic}
    .chart-svg .axis{fill:var(--muted);font-size:11px} .chart-svg .axis-title{fill:var(--muted);font-size:11.5px} .chart-svg .grid{stroke:#eef0f3}
    .bars{display:grid;grid-template-columns:minmax(0,max-content) minmax(60px,1fr) minmax(2.5em,auto);gap:4px 8px;align-items:center;font-size:12px}
    .bars .lbl{text-align:right;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:220px}
    .bars .track{height:16px;display:flex;align-items:center}
    .bars .bar{display:block;height:100%;min-width:4px;border-radius:3px;background:var(--blue)} .bars .bar-fallback{background:#64748b}
    .bars .track.never{background:#f3f4f6;border:1px solid #e5e7eb;border-radius:3px;color:#9ca3af;font-style:italic;font-size:11px;padding-left:6px}
    .bars .val{color:var(--muted);font-variant-numeric:tabular-nums}
    .chart.side-other .bars .bar{background:var(--purple)}
    .grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(420px,100%),1fr));gap:12px}
    .grid2>*{min-width:0}
    .panel{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:4px 16px 14px;margin-bottom:12px}
    table{border-collapse:collapse;width:100%}
    td,th{padding:5px 8px;border-bottom:1px solid #eef0f3;text-align:left;vertical-align:top}
    th{font-size:12px;color:var(--muted);font-weight:600}
    .num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
    .note{background:var(--amber-soft);border:1px solid #f5d9a8;border-radius:8px;padding:8px 10px;font-size:13px}
    .chips{line-height:2}
    .never-chip{white-space:nowrap;background:#fef2f2;color:#991b1b;border:1px solid #fecaca}
    .examples{padding-left:18px;margin:6px 0} .examples li{margin:3px 0}
    table.diff .ex{margin:2px 0 8px;font-size:13px}
    #conversations{margin-top:8px}
    .filter{position:sticky;top:0;z-index:2;display:flex;flex-wrap:wrap;gap:8px;align-items:center;background:var(--bg);padding:8px 0}
    .filter input{flex:1 1 220px;min-width:0;font:inherit;padding:8px 12px;border:1px solid var(--line);border-radius:8px;background:#fff}
    .filter select,.filter button{font:inherit;padding:7px 10px;border:1px solid var(--line);border-radius:8px;background:#fff;cursor:pointer}
    .legend{display:flex;gap:14px;flex-wrap:wrap;font-size:12px;color:var(--muted);margin:4px 0 10px}
    .lg::before{content:"";display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:5px;vertical-align:-1px}
    .lg-customer::before{background:#fff;border:1px solid #b6bec8} .lg-bot::before{background:var(--blue)} .lg-agent::before{background:var(--agent)} .lg-recbot::before{background:#f3f4f6;border:1px dashed #9ca3af} .lg-other::before{background:var(--purple)} .lg-sys::before{background:#e2e5ea}
    details.conv{background:var(--panel);border:1px solid var(--line);border-radius:10px;margin-bottom:8px}
    details.conv>summary{cursor:pointer;padding:10px 14px;display:flex;gap:10px;align-items:center;flex-wrap:wrap;list-style:none}
    details.conv>summary::-webkit-details-marker{display:none}
    details.conv>summary::before{content:"▸";color:var(--muted);width:10px}
    details.conv[open]>summary::before{content:"▾"}
    details.conv[open]>summary{border-bottom:1px solid #eef0f3}
    .cid{font-weight:650;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
    .facts{display:flex;gap:6px;flex-wrap:wrap;align-items:center}
    .fact{color:var(--muted);font-size:12.5px;margin-right:4px}
    .src{margin-left:auto;color:var(--muted);font-size:12px}
    .part{font-size:12px;color:var(--muted)}
    .chip{display:inline-block;font-size:11.5px;padding:1px 8px;border-radius:999px;background:var(--grey);color:#374151;margin:1px 3px 1px 0;white-space:nowrap}
    .chip-handoff{background:#fdf2e9;color:#9a3412;border:1px solid #fbd5b5}
    .chip-agent{background:var(--agent-soft);color:var(--agent)}
    .chip-warn{background:var(--amber-soft);color:var(--amber);border:1px solid #f5d9a8}
    .chip-diff{background:var(--purple-soft);color:var(--purple)}
    .chat{padding:10px 16px 14px;display:flex;flex-direction:column;gap:5px}
    .day{align-self:center;font-size:11px;color:var(--muted);background:var(--grey);border-radius:999px;padding:1px 10px;margin:4px 0}
    .msg{display:flex;flex-direction:column;max-width:72%}
    .msg .bubble{padding:8px 12px;border-radius:14px;white-space:pre-wrap;overflow-wrap:anywhere}
    .msg .meta{font-size:11px;color:var(--muted);margin:2px 6px 0}
    .msg .quick{display:flex;flex-wrap:wrap;gap:4px;margin-top:4px;justify-content:flex-end} .msg .qr{padding:3px 10px;border:1px solid var(--blue);border-radius:12px;font-size:12px;color:var(--blue);background:#fff;text-decoration:none;overflow-wrap:anywhere}
    .msg.customer{align-self:flex-start} .msg.customer .bubble{background:#fff;border:1px solid var(--line);border-bottom-left-radius:4px}
    .msg.bot{align-self:flex-end;align-items:flex-end} .msg.bot .bubble{background:var(--blue);color:#fff;border-bottom-right-radius:4px}
    .msg.other{align-self:flex-end;align-items:flex-end} .msg.other .bubble{background:var(--purple-soft);color:#3b0764;border:1px dashed var(--purple);border-bottom-right-radius:4px}
    .msg.agent{align-self:flex-end;align-items:flex-end} .msg.agent .bubble{background:var(--agent-soft);color:#134e4a;border:1px solid #99d8cc;border-bottom-right-radius:4px}
    .msg.recbot{align-self:flex-end;align-items:flex-end} .msg.recbot .bubble{background:#f3f4f6;color:#374151;border:1px dashed #9ca3af}
    .msg.warn .bubble,.sys.warn span{box-shadow:0 0 0 2px #f59e0b}
    .warn-label{color:var(--amber);font-weight:600}
    .rule{font:11px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--blue-soft);color:#1e40af;padding:0 6px;border-radius:4px}
    .msg.other .rule,.effects.other .rule{background:var(--purple-soft);color:var(--purple)}
    .sys{align-self:center;text-align:center;max-width:80%;display:flex;flex-direction:column;align-items:center}
    .sys span{background:var(--grey);border-radius:10px;padding:5px 12px;font-size:12.5px;font-style:italic;color:#374151}
    .sys.bot span{background:#fff7ed;border:1px solid #fed7aa;color:#7c2d12}
    .sys.other span{background:var(--purple-soft);border:1px dashed var(--purple)}
    .sys small{font-size:11px;color:var(--muted);margin-top:2px}
    .effects{align-self:flex-end;text-align:right}
    .event{align-self:center;font-size:12px;color:var(--agent);background:var(--agent-soft);border-radius:999px;padding:2px 12px;margin:2px 0}
    .quiet{font-size:11.5px;color:#9ca3af;font-style:italic}
    .quiet.bot,.quiet.other{align-self:flex-end}
    footer{color:var(--muted);font-size:12px;padding:18px 24px 40px}
    td,code{overflow-wrap:anywhere}
    @media (max-width:600px){.wrap{padding:0 12px} header.top h1{font-size:19px} .msg{max-width:88%} .src{margin-left:0}
      table.diff thead{display:none} table.diff tr{display:grid;grid-template-columns:1fr auto auto;border-bottom:1px solid #eef0f3}
      table.diff td{border:0} table.diff td:nth-child(2)::after{content:" conv."} table.diff td:nth-child(3)::after{content:" msgs"}
      table.diff td:last-child{grid-column:1/-1;padding-top:0}}
    @media print{.filter{display:none}details.conv{break-inside:avoid}}
    """

    /// The filter: a text box and a select over the conversation list. Reads the page, adds
    /// nothing to it but `hidden` attributes.
    static let script = """
    (function(){
    var bar=document.getElementById('filter');if(!bar)return;bar.hidden=false;
    var q=document.getElementById('q'),only=document.getElementById('only'),shown=document.getElementById('shown'),none=document.getElementById('none');
    var items=Array.prototype.slice.call(document.querySelectorAll('details.conv')),text=null,timer=0;
    function apply(){
      if(text===null)text=items.map(function(d){return d.textContent.toLowerCase();});
      var words=q.value.toLowerCase().split(/\\s+/).filter(Boolean),o=only.value,n=0;
      items.forEach(function(d,i){
        var ok=words.every(function(w){return text[i].indexOf(w)>=0;});
        if(ok&&o==='handoff')ok=d.dataset.handoff==='1';
        if(ok&&o==='spoke')ok=d.dataset.spoke!=='0';
        if(ok&&o==='diff')ok=d.dataset.diff!=='0';
        d.hidden=!ok;if(ok)n++;
      });
      shown.textContent=n===items.length?String(n):n+' of '+items.length;none.hidden=n>0;
    }
    q.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(apply,120);});
    only.addEventListener('change',apply);
    document.getElementById('expand').addEventListener('click',function(){items.forEach(function(d){if(!d.hidden)d.open=true;});});
    document.getElementById('collapse').addEventListener('click',function(){items.forEach(function(d){d.open=false;});});
    })();
    """
}
