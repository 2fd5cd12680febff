import Foundation
import UsherEngine

/// `usher replay --format json`: one JSON document, schema version 1 (docs/replay.md).
/// Written as the replay goes: the header, each conversation (one message per line), then the
/// totals. Keys come in a fixed order; tools must not depend on it.
public struct ReportJSON: ReplayReportWriter {
    /// Bumped when a key is renamed or removed, or a value changes meaning; new keys may be
    /// added without a bump.
    public static let schemaVersion = 1

    private let out: ReportOutput
    private let conversations: Bool
    private var first = true

    /// - Parameter conversations: include every conversation; `false` leaves the array empty.
    public init(_ out: ReportOutput, conversations: Bool = true) {
        self.out = out
        self.conversations = conversations
    }

    // MARK: Small writers

    private func str(_ s: String) { out.writeJSONString(s) }
    private func optStr(_ s: String?) { if let s { out.writeJSONString(s) } else { out.write("null") } }
    private func key(_ k: String) { out.write("\"" + k + "\": ") }
    private func strings(_ a: [String]) {
        out.write("[")
        for (i, s) in a.enumerated() {
            if i > 0 { out.write(", ") }
            str(s)
        }
        out.write("]")
    }
    private func fields(_ f: [(key: String, value: String)]) {
        out.write("{")
        for (i, kv) in f.enumerated() {
            if i > 0 { out.write(", ") }
            key(kv.key)
            str(kv.value)
        }
        out.write("}")
    }
    private func counts(_ pairs: [(String, Int)]) {
        out.write("{")
        for (i, p) in pairs.enumerated() {
            if i > 0 { out.write(", ") }
            str(p.0)
            out.write(": \(p.1)")
        }
        out.write("}")
    }

    private func bot(_ b: ReplayBotInfo?) {
        guard let b else { out.write("null"); return }
        out.write("{")
        key("id"); str(b.id)
        out.write(", "); key("name"); str(b.name)
        out.write(", "); key("path"); str(b.path)
        out.write(", "); key("rule_set_version"); str(b.version)
        out.write(", \"rules\": \(b.rules), \"fallback\": \(b.hasFallback)}")
    }

    // MARK: ReplayReportWriter

    public mutating func begin(_ h: ReplayHeader) {
        out.write("{\n  \"schema_version\": \(Self.schemaVersion),\n  \"generator\": \"usher replay\",\n  \"bot\": ")
        bot(h.bot)
        out.write(",\n  \"against\": ")
        bot(h.against)
        out.write(",\n  \"options\": {\"agents\": ")
        str(h.options.agents.rawValue)
        out.write(", \"skip_bad_lines\": \(h.options.skipBadLines), \"turns_start\": ")
        str(TranscriptTime.format(h.timeline.start))
        out.write(", \"turns_conversation_spacing_seconds\": \(Self.number(h.timeline.conversationSpacing))")
        out.write(", \"turns_turn_spacing_seconds\": \(Self.number(h.timeline.turnSpacing))}")
        out.write(",\n  \"transcripts\": ")
        strings(h.transcripts)
        out.write(",\n  \"conversations\": [")
    }

    public mutating func add(_ c: ReplayConversation) {
        guard conversations else { return }
        var b = ReportBytes(capacity: 8192)
        b.raw(first ? "\n    {\"id\": " : ",\n    {\"id\": ")
        first = false
        b.json(c.id)
        b.raw(", \"file\": "); b.json(c.file)
        b.raw(", \"line\": "); b.int(c.line)
        b.raw(", \"format\": "); b.json(c.format.rawValue)
        b.raw(", \"part\": "); b.int(c.part)
        b.raw(", \"messages\": "); b.int(c.steps.count)
        b.raw(", \"customer_messages\": "); b.int(c.customerMessages)
        b.raw(", \"replies\": "); b.int(c.replies)
        b.raw(", \"handoffs\": "); b.handoffs(c.handoffs)
        b.raw(", \"takeover_step\": ")
        if let t = c.takeover { b.int(t) } else { b.raw("null") }
        b.raw(", \"spoke_over_human\": "); b.int(c.spokeOverHuman)
        if c.steps.contains(where: { $0.against != nil }) {
            b.raw(", \"differences\": "); b.int(c.differences)
            b.raw(", \"against_handoffs\": "); b.handoffs(c.handoffs(against: true))
        }
        b.raw(",\n     \"steps\": [")
        for (i, s) in c.steps.enumerated() {
            b.raw(i == 0 ? "\n      {\"step\": " : ",\n      {\"step\": ")
            let m = s.message
            b.int(i)
            b.raw(", \"line\": "); b.int(s.line)
            b.raw(", \"id\": "); b.json(m.id)
            b.raw(", \"at\": \""); b.time(m.at)
            b.raw("\", \"from\": "); b.json(m.from.rawValue)
            b.raw(", \"sender_id\": "); b.json(m.senderID)
            b.raw(", \"sender_name\": "); b.json(m.senderName)
            b.raw(", \"text\": "); b.json(m.text)
            b.raw(", \"human_had_written\": "); b.bool(s.humanHadWritten)
            b.raw(", \"spoke_over_human\": "); b.bool(s.spokeOverHuman)
            b.raw(", \"bot\": "); b.outcome(s.bot)
            if s.against != nil {
                b.raw(", \"differs\": "); b.bool(s.differs)
                b.raw(", \"against\": "); b.outcome(s.against)
            }
            b.raw("}")
        }
        b.raw(c.steps.isEmpty ? "]}" : "\n     ]}")
        out.write(&b)
    }

    private func outcome(_ o: ReplayOutcome?) {
        var b = ReportBytes()
        b.outcome(o)
        out.write(&b)
    }

    public mutating func end(_ r: ReplayResult) {
        out.write(first ? "],\n  \"summary\": " : "\n  ],\n  \"summary\": ")
        summary(r.summary)
        out.write(",\n  \"against_summary\": ")
        if let s = r.againstSummary { summary(s) } else { out.write("null") }
        out.write(",\n  \"differences\": ")
        if let d = r.diff { diff(d) } else { out.write("null") }
        out.write(",\n  \"input\": {\"records\": \(r.records), \"skipped_lines\": \(r.skippedLines), \"duplicates\": \(r.duplicates)")
        out.write(", \"peak_conversations_in_memory\": \(r.peakInFlight), \"bad_lines\": [")
        for (i, e) in r.badLines.enumerated() {
            out.write(i == 0 ? "\n    {" : ",\n    {")
            key("file"); str(e.file)
            out.write(", \"line\": \(e.line.map(String.init) ?? "null"), \"column\": \(e.column.map(String.init) ?? "null"), ")
            key("code"); str(e.code)
            out.write(", "); key("message"); str(e.message)
            out.write("}")
        }
        out.write(r.badLines.isEmpty ? "]}\n}\n" : "\n  ]}\n}\n")
        out.flush()
    }

    private func summary(_ s: ReplaySummary) {
        out.write("{\n    ")
        key("bot"); str(s.bot)
        out.write(",\n    \"conversations\": \(s.conversations)")
        out.write(",\n    \"messages\": {\"customer\": \(s.customerMessages), \"agent\": \(s.agentMessages), \"bot\": \(s.botMessages), \"system\": \(s.systemMessages)}")
        out.write(",\n    \"decided\": \(s.decided), \"silent\": {\"waiting\": \(s.silentWaiting), \"agent\": \(s.silentAgent)}, \"agent_messages_not_fed\": \(s.notFed)")
        out.write(",\n    \"replies\": \(s.replies), \"system_notices\": \(s.systemNotices), \"conversations_with_replies\": \(s.conversationsWithReplies)")
        out.write(",\n    \"handoffs\": {\"total\": \(s.handoffs), \"conversations\": \(s.conversationsHandedOff), \"by_reason\": ")
        counts(s.handoffReasons.map { ($0.reason, $0.count) })
        out.write(", \"by_customer_message\": ")
        counts(s.handoffPositions.sorted { $0.key < $1.key }.map { (String($0.key), $0.value) })
        out.write("}")
        out.write(",\n    \"takeovers\": {\"total\": \(s.takeovers), \"before_handoff\": \(s.takeoversBeforeHandoff)}")
        out.write(",\n    \"spoke_over_human\": {\"messages\": \(s.spokeOverHuman), \"conversations\": \(s.spokeOverConversations), \"by_rule\": ")
        counts(s.spokeOverByRule.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map { ($0.key, $0.value) })
        out.write(", \"examples\": [")
        for (i, e) in s.spokeOverExamples.enumerated() {
            out.write(i == 0 ? "\n      {" : ",\n      {")
            key("conversation"); str(e.conversation)
            out.write(", \"step\": \(e.step), \"customer_message\": \(e.customerMessage.map(String.init) ?? "null"), ")
            key("text"); str(e.text)
            out.write(", \"rules\": "); strings(e.rules)
            out.write(", "); key("said"); str(e.said)
            out.write("}")
        }
        out.write(s.spokeOverExamples.isEmpty ? "]}" : "\n    ]}")
        out.write(",\n    \"rules\": [")
        for (i, id) in s.ruleIDs.enumerated() {
            out.write(i == 0 ? "\n      {" : ",\n      {")
            key("id"); str(id)
            out.write(", \"hits\": \(s.ruleHits[id] ?? 0)}")
        }
        out.write(s.ruleIDs.isEmpty ? "]" : "\n    ]")
        out.write(",\n    \"never_fired\": ")
        strings(s.neverFired)
        out.write(",\n    \"regex_limits\": [")
        for (i, l) in s.regexLimitHits.enumerated() {
            if i > 0 { out.write(", ") }
            out.write("{")
            key("rule"); str(l.limit.rule)
            out.write(", "); key("pattern"); str(l.limit.pattern)
            out.write(", "); key("limit"); str(l.limit.limit)
            out.write(", \"count\": \(l.count)}")
        }
        out.write("],\n    \"truncated_messages\": \(s.truncations)\n  }")
    }

    private func diff(_ d: ReplayDiff) {
        out.write("{\"compared\": \(d.compared), \"messages\": \(d.messages), \"conversations\": \(d.conversations), \"transitions\": [")
        for (i, t) in d.transitions.enumerated() {
            out.write(i == 0 ? "\n    {" : ",\n    {")
            key("from"); str(t.from)
            out.write(", "); key("to"); str(t.to)
            out.write(", \"messages\": \(t.messages), \"conversations\": \(t.conversations), \"examples\": [")
            for (j, e) in t.examples.enumerated() {
                out.write(j == 0 ? "\n      {" : ",\n      {")
                key("conversation"); str(e.conversation)
                out.write(", \"step\": \(e.step), \"customer_message\": \(e.customerMessage.map(String.init) ?? "null"), ")
                key("text"); str(e.text)
                out.write(", \"bot\": "); outcome(e.bot)
                out.write(", \"against\": "); outcome(e.against)
                out.write("}")
            }
            out.write(t.examples.isEmpty ? "]}" : "\n    ]}")
        }
        out.write(d.transitions.isEmpty ? "]}" : "\n  ]}")
    }

    static func number(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x)
    }
}

extension ReportBytes {
    /// Handoffs as a JSON array.
    fileprivate mutating func handoffs(_ hs: [ReplayHandoff]) {
        raw("[")
        for (i, h) in hs.enumerated() {
            raw(i == 0 ? "{\"step\": " : ", {\"step\": ")
            int(h.step)
            raw(", \"customer_message\": "); int(h.customerMessage)
            raw(", \"reason\": "); json(h.reason)
            raw(", \"rule\": "); json(h.rule)
            raw("}")
        }
        raw("]")
    }

    /// A decision as a JSON object (effects in `DecisionJSON`'s shape), or `null`.
    fileprivate mutating func outcome(_ o: ReplayOutcome?) {
        guard let o else { raw("null"); return }
        raw("{\"outcome\": "); json(o.outcomeName)
        raw(", \"fired\": "); json(o.fired)
        raw(", \"session\": "); int(o.session)
        raw(", \"customer_message\": ")
        if let n = o.customerMessage { int(n) } else { raw("null") }
        raw(", \"owner_before\": "); json(o.ownerBefore.rawValue)
        if let l = o.language {
            raw(", \"language\": {\"code\": "); json(l.language)
            raw(", \"reason\": "); json(l.reasonName)
            raw("}")
        }
        raw(", \"effects\": [")
        for (i, e) in o.effects.enumerated() {
            if i > 0 { raw(", ") }
            raw("{")
            for (k, kv) in DecisionJSON.effectFields(e).enumerated() {
                if k > 0 { raw(", ") }
                json(kv.key)
                raw(": ")
                json(kv.value)
            }
            if case let .reply(_, _, q) = e, !q.isEmpty {
                raw(", \"quick_replies\": [")
                for (k, item) in q.enumerated() {
                    raw(k > 0 ? ", {\"title\": " : "{\"title\": "); json(item.title)
                    if let url = item.url { raw(", \"url\": "); json(url) }
                    raw("}")
                }
                raw("]")
            }
            raw("}")
        }
        raw("]")
        if !o.events.isEmpty {
            raw(", \"events\": [")
            for (i, e) in o.events.enumerated() {
                if i > 0 { raw(", ") }
                switch e {
                case let .regexLimit(rule, pattern, limit):
                    raw("{\"type\": \"regex_limit\", \"rule\": "); json(rule)
                    raw(", \"pattern\": "); json(pattern)
                    raw(", \"limit\": "); json(limit)
                    raw("}")
                case let .truncated(bytes):
                    raw("{\"type\": \"truncated\", \"bytes\": "); int(bytes); raw("}")
                }
            }
            raw("]")
        }
        raw("}")
    }
}
