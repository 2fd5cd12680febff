import Foundation
import UsherEngine

/// `usher replay --format text`: each conversation as it completes (what the bot would have
/// written under each customer message), then the summary. Colour only when asked (a terminal).
public struct ReportText: ReplayReportWriter {
    private let out: ReportOutput
    private let colour: Bool
    private let conversations: Bool
    private var header: ReplayHeader?
    /// The start of a line under a message: the bot's effects, the other bot's.
    private let botLead = "              ↳ "
    private var otherLead = ""
    private var clock = ReportLocalTime(TimeZone(identifier: "UTC")!)
    /// Message texts are shown on one line, cut at this many characters.
    private let width = 100

    /// - Parameters:
    ///   - colour: ANSI colours (a terminal that wants them).
    ///   - conversations: print every conversation; `false` prints the summary only.
    public init(_ out: ReportOutput, colour: Bool = false, conversations: Bool = true) {
        self.out = out
        self.colour = colour
        self.conversations = conversations
    }

    // MARK: Styling

    private func paint(_ s: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(s)\u{1B}[0m" : s }
    private func dim(_ s: String) -> String { paint(s, "2") }
    private func bold(_ s: String) -> String { paint(s, "1") }
    private func green(_ s: String) -> String { paint(s, "32") }
    private func yellow(_ s: String) -> String { paint(s, "33") }
    private func cyan(_ s: String) -> String { paint(s, "36") }
    private func magenta(_ s: String) -> String { paint(s, "35") }

    /// One line, at most `width` characters: see `ReportOutput.writeFlattened`.
    private func oneLine(_ s: String, width: Int? = nil) -> String {
        let o = ReportOutput()
        o.writeFlattened(s, maxScalars: width ?? self.width)
        return o.text
    }

    private static func plural(_ n: Int, _ word: String, _ plural: String? = nil) -> String {
        "\(n) \(n == 1 ? word : plural ?? word + "s")"
    }

    // MARK: ReplayReportWriter

    public mutating func begin(_ h: ReplayHeader) {
        header = h
        clock = ReportLocalTime(h.bot.timeZone)
        otherLead = "              " + magenta("≠") + " " + (h.names.against.map { magenta("[\($0)] ") } ?? "")
        var s = "usher replay: bot \(bold(h.bot.id)) (rule set \(h.bot.version), \(Self.plural(h.bot.rules, "rule")))"
        if let a = h.against { s += " against \(bold(a.id)) (rule set \(a.version), \(Self.plural(a.rules, "rule")))" }
        s += "\n"
        s += "transcripts: \(h.transcripts.joined(separator: ", "))\n"
        s += h.options.agents == .takeover
            ? "agents: recorded agent messages take over, as in the worker (--ignore-agents to let the bot answer alone)\n"
            : "agents: recorded agent messages are not given to the bot (--ignore-agents); it answers as if alone\n"
        s += "times: \(h.bot.timeZone.identifier)\n"
        out.write(s + "\n")
    }

    private func on(_ code: StaticString, _ b: inout ReportBytes) {
        if colour { b.raw("\u{1B}["); b.raw(code); b.raw("m") }
    }
    private func off(_ b: inout ReportBytes) { if colour { b.raw("\u{1B}[0m") } }

    public mutating func add(_ c: ReplayConversation) {
        guard conversations, let header else { return }
        let file = c.file.split(separator: "/").last.map(String.init) ?? c.file
        var facts = [Self.plural(c.customerMessages, "customer message"), Self.plural(c.replies, "reply", "replies")]
        if let h = c.handoffs.first { facts.append("handoff at customer message \(h.customerMessage) (\(h.reason))") }
        if let t = c.takeover {
            let before = c.steps[..<t].filter { $0.message.from == .customer }.count
            facts.append(before == 0 ? "agent took over before any customer message" : "agent took over after customer message \(before)")
        }
        if c.spokeOverHuman > 0 { facts.append(yellow("spoke over a human \(c.spokeOverHuman)×")) }
        if header.against != nil, c.differences > 0 { facts.append(magenta("\(Self.plural(c.differences, "difference"))")) }
        let part = c.part > 1 ? " (part \(c.part))" : ""
        let day = c.steps.first.map { clock.day($0.message.at) } ?? ""
        var b = ReportBytes(capacity: 4096)
        b.text("\(bold(c.id))\(part)  \(dim("\(file):\(c.line) · \(day)"))  \(facts.joined(separator: ", "))\n")
        var session = 1
        for step in c.steps {
            let m = step.message
            if let o = step.bot, o.session > session {
                session = o.session
                b.text("  " + dim("── session \(session): a new session after \(header.bot.idleResetText ?? "a reset") of silence ──") + "\n")
            }
            b.raw("  ")
            on("2", &b)
            b.text(clock.time(m.at))
            off(&b)
            switch m.from {
            case .customer:
                b.raw("  customer ")
                let n = step.customerMessage ?? 0
                if n > 0 { b.int(n) }
                b.raw(n >= 100 ? " " : n >= 10 ? "  " : n > 0 ? "   " : "    ")
            case .agent: b.raw("  agent        ")
            case .bot: b.raw("  recorded bot ")
            case .system: b.raw("  system       ")
            }
            b.flattened(m.text, maxScalars: width)
            b.raw("\n")
            if let o = step.bot {
                lines(o, into: &b)
                if step.spokeOverHuman { b.text("              \(yellow("⚠ a human agent had already written here"))\n") }
            }
            if step.differs, let a = step.against {
                lines(a, other: header.names.against, into: &b)
            }
        }
        b.raw("\n")
        out.write(&b)
    }

    /// The effects of one decision, one line each (nothing for a plain silent decision of the
    /// bot's own or another bot's message).
    private func lines(_ o: ReplayOutcome, other: String? = nil, into b: inout ReportBytes) {
        let lead = other == nil ? botLead : otherLead
        switch o.outcome {
        case .ignored:
            if other != nil { b.text(lead + "ignored\n") }
            return
        case .takeover:
            if o.tookOver { b.text(lead + "takeover  " + dim("an agent took over; the bot is silent from here") + "\n") }
            return
        case let .silent(owner):
            b.text(lead + "silent    " + dim(owner == .agent ? "an agent owns the conversation" : "waiting for an agent") + "\n")
            return
        case .noMatch:
            b.text(lead + "no match  " + dim("no rule fired and the bot has no fallback") + "\n")
            return
        case .fired, .fallback:
            if o.effects.isEmpty { b.text(lead + "fired     " + green(o.fired.joined(separator: ", ")) + dim(" (no effects)") + "\n") }
        }
        for e in o.effects {
            b.text(lead)
            switch e {
            case let .reply(t, r, q):
                b.raw("reply     ")
                b.flattened(t, maxScalars: width)
                b.raw("  ")
                on("32", &b); b.raw("["); b.text(r); b.raw("]"); off(&b)
                if let l = o.language { b.text(" " + dim("in " + l.description)) }
                b.raw("\n")
                if !q.isEmpty {
                    b.text(lead)
                    b.raw("buttons   ")
                    b.flattened(QuickReply.line(q), maxScalars: width)
                    b.raw("\n")
                }
            case let .system(t, r):
                b.raw("system    ")
                on("36", &b); b.flattened(t, maxScalars: width); off(&b)
                b.raw("  ")
                on("32", &b); b.raw("["); b.text(r); b.raw("]"); off(&b)
                b.raw("\n")
            case let .handoff(reason, q, p, r):
                b.text("handoff   " + bold(reason) + dim(", queue \(q)\(p == .normal ? "" : ", priority \(p.rawValue)")") + "  " + green("[" + r + "]") + "\n")
            case let .notify(t, q, _, _):
                on("2", &b)
                b.raw("notify    "); b.text(q); b.raw(": ")
                b.flattened(t, maxScalars: 70)
                off(&b)
                b.raw("\n")
            case let .tag(t): on("2", &b); b.raw("tag       "); b.text(t); off(&b); b.raw("\n")
            case let .untag(t): on("2", &b); b.raw("untag     "); b.text(t); off(&b); b.raw("\n")
            case let .set(k, v):
                on("2", &b)
                b.raw("set       "); b.text(k); b.raw(" = ")
                b.flattened(v, maxScalars: 60)
                off(&b)
                b.raw("\n")
            }
        }
    }

    public mutating func end(_ r: ReplayResult) {
        guard let header else { return }
        let names = header.names
        var s = summary(r.summary, header: header, title: "Summary: bot \(names.bot)", result: r)
        if let a = r.againstSummary, let other = names.against {
            s += "\n" + summary(a, header: header, title: "Summary: bot \(other) (--against)", result: nil)
        }
        if let d = r.diff, let other = names.against {
            s += "\n" + differences(d, bot: names.bot, other: other)
        }
        s += "\n" + input(r)
        out.write(s)
        out.flush()
    }

    private func bar(_ n: Int, of max: Int, width: Int = 30) -> String {
        guard max > 0, n > 0 else { return "" }
        let cells = Swift.max(1, Int((Double(n) / Double(max) * Double(width)).rounded()))
        return String(repeating: "█", count: cells)
    }

    private func summary(_ s: ReplaySummary, header h: ReplayHeader, title: String, result: ReplayResult?) -> String {
        func row(_ label: String, _ value: Int, _ detail: String = "") -> String {
            "  " + label.rightPad(20) + String(value).leftPad(7) + (detail.isEmpty ? "" : "   " + detail) + "\n"
        }
        var o = bold(title) + "\n"
        o += row("conversations", s.conversations, "from \(Self.plural(h.transcripts.count, "transcript"))")
        var silent: [String] = []
        if s.silentWaiting > 0 { silent.append("waiting \(s.silentWaiting)") }
        if s.silentAgent > 0 { silent.append("agent \(s.silentAgent)") }
        o += row("customer messages", s.customerMessages,
                 "rules evaluated on \(s.decided), silent on \(s.silentWaiting + s.silentAgent)\(silent.isEmpty ? "" : " (\(silent.joined(separator: ", ")))")")
        var agentDetail: String
        if h.options.agents == .ignore {
            agentDetail = "not given to the bot (--ignore-agents)"
        } else {
            agentDetail = "took over \(Self.plural(s.takeovers, "conversation")), \(s.takeoversBeforeHandoff) before the bot handed off"
        }
        o += row("agent messages", s.agentMessages, agentDetail)
        if s.botMessages + s.systemMessages > 0 {
            o += row("recorded bot/system", s.botMessages + s.systemMessages, "ignored by the engine")
        }
        o += row("bot replies", s.replies, "in \(Self.plural(s.conversationsWithReplies, "conversation")); \(Self.plural(s.systemNotices, "system notice"))")
        let reasons = s.handoffReasons.map { "\($0.reason) \($0.count)" }.joined(separator: ", ")
        o += row("handoffs", s.handoffs, "in \(Self.plural(s.conversationsHandedOff, "conversation"))\(reasons.isEmpty ? "" : ": " + reasons)")
        if s.handoffs > 0 || s.conversations > 0 {
            o += "  handoff at customer message\n"
            let never = s.conversations - s.conversationsHandedOff
            let positions = s.handoffPositions.sorted { $0.key < $1.key }
            let peak = max(positions.map(\.value).max() ?? 0, never)
            for (k, v) in positions {
                o += "  " + String(k).leftPad(24) + "  " + String(v).leftPad(5) + (v > 0 ? "  " + green(bar(v, of: peak)) : "") + "\n"
            }
            o += "  " + "no handoff".leftPad(24) + "  " + String(never).leftPad(5) + (never > 0 ? "  " + dim(bar(never, of: peak)) : "") + "\n"
        }
        let byRule = s.spokeOverByRule.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(6).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        o += row("spoke over a human", s.spokeOverHuman,
                 s.spokeOverHuman == 0 ? "" : "in \(Self.plural(s.spokeOverConversations, "conversation")): \(byRule)")
        for e in s.spokeOverExamples.prefix(5) {
            o += "      " + dim("\(e.conversation) #\(e.customerMessage.map(String.init) ?? "?"):") + " \"\(oneLine(e.text, width: 50))\" → "
                + green(e.rules.joined(separator: "+")) + " \"\(oneLine(e.said, width: 40))\"\n"
        }
        o += row("regex limits hit", s.regexLimits.values.reduce(0, +))
        for l in s.regexLimitHits.prefix(5) {
            o += "      " + yellow("\(l.limit.rule): '\(oneLine(l.limit.pattern, width: 40))' hit its \(l.limit.limit)") + " \(l.count)×\n"
        }
        o += row("truncated messages", s.truncations)
        if h.options.agents == .takeover, s.conversations >= 4, s.takeoversBeforeHandoff * 2 > s.conversations {
            o += "  " + yellow("note:") + " an agent wrote before the bot handed off in \(s.takeoversBeforeHandoff) of \(s.conversations) conversations, so the bot fell silent early. For recordings made without a bot, --ignore-agents shows what it would have done alone.\n"
        }

        let hits = s.rulesByHits
        o += "\n" + bold("Rules by hits") + " (\(s.rulesFiredText))\n"
        let w = max(12, (s.ruleIDs.map(\.count).max() ?? 12) + 1)
        let top = hits.first?.hits ?? 0
        for (rule, n) in hits {
            o += "  " + rule.rightPad(w) + String(n).leftPad(7) + "  " + green(bar(n, of: top)) + "\n"
        }
        let never = s.neverFired
        o += "\n" + bold("Never fired") + " (\(never.count))" + (never.isEmpty ? ": every rule fired at least once" : ":") + "\n"
        if !never.isEmpty {
            var line = " "
            for (i, id) in never.enumerated() {
                let item = " " + id + (i == never.count - 1 ? "" : ",")
                if line.count + item.count > 100 { o += line + "\n"; line = " " }
                line += item
            }
            o += line + "\n"
        }
        _ = result
        return o
    }

    private func differences(_ d: ReplayDiff, bot: String, other: String) -> String {
        var o = bold("Differences: \(bot) → \(other)") + " (\(Self.plural(d.messages, "message")) in \(Self.plural(d.conversations, "conversation")), of \(d.compared) compared)\n"
        if d.messages == 0 { return o + "  the two bots decide every message the same way\n" }
        for t in d.transitions {
            o += "  " + magenta(t.name) + ": \(Self.plural(t.conversations, "conversation")), \(Self.plural(t.messages, "message"))\n"
            for e in t.examples {
                o += "      " + dim("\(e.conversation) #\(e.customerMessage.map(String.init) ?? "?")") + " \"\(oneLine(e.text, width: 60))\"\n"
                o += "        \(bot): \(brief(e.bot))\n"
                o += "        \(other): \(brief(e.against))\n"
            }
        }
        return o
    }

    /// An outcome in a few words: rules and the first thing said.
    private func brief(_ o: ReplayOutcome) -> String {
        var s = o.label
        if let said = o.effects.lazy.compactMap({ e -> String? in
            switch e { case let .reply(t, _, _), let .system(t, _): t; default: nil }
        }).first {
            s += " \"\(oneLine(said, width: 60))\""
        }
        if let h = o.handoff { s += " (handoff: \(h.reason))" }
        return s
    }

    private func input(_ r: ReplayResult) -> String {
        var o = "read \(Self.plural(r.records, "record")) (\(Self.plural(r.summary.conversations, "conversation"))), at most \(r.peakInFlight) in memory at once"
        if r.duplicates > 0 { o += "; \(Self.plural(r.duplicates, "duplicate message")) ignored" }
        o += "\n"
        if r.skippedLines > 0 {
            o += yellow("skipped \(Self.plural(r.skippedLines, "bad line"))") + " (--skip-bad-lines):\n"
            for e in r.badLines { o += "  \(e)\n" }
            if r.skippedLines > r.badLines.count { o += "  … and \(r.skippedLines - r.badLines.count) more\n" }
        }
        return o
    }
}

extension String {
    /// Left-aligned in `width` characters.
    func rightPad(_ width: Int) -> String {
        let n = count
        return n >= width ? self : self + String(repeating: " ", count: width - n)
    }

    /// Right-aligned in `width` characters.
    func leftPad(_ width: Int) -> String {
        let n = count
        return n >= width ? self : String(repeating: " ", count: width - n) + self
    }
}
