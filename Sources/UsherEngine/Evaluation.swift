import Foundation
import UsherRules
import UsherText
import UsherYAML

/// The evaluation of one customer message: rules in order, guards, limits, effects.
struct Evaluation {
    let ruleSet: RuleSet
    var state: ConversationState
    let message: Message
    let now: Date
    /// Seconds since the previous message of the conversation.
    let idle: TimeInterval
    let options: Engine.Options

    var matcher: MessageMatcher
    var trace: [RuleTrace] = []
    var effects: [Effect] = []
    /// The safety limit that dropped this decision's replies, if one did.
    var limit: ReplyLimit?
    /// The language of the first reply written per language, once one is sent.
    var language: LanguageChoice?
    /// The message's language among the bot's (nil inside: it does not tell), once asked.
    var detectedLanguage: LanguageGuess.Guess??
    /// The conversation's language before this message (`ConversationState.language`).
    var earlierLanguage: String?

    init(ruleSet: RuleSet, state: ConversationState, message: Message, now: Date, idle: TimeInterval,
         options: Engine.Options) {
        self.ruleSet = ruleSet
        self.state = state
        self.message = message
        self.now = now
        self.idle = idle
        self.options = options
        // The budget counts from here; a bot without regexes has nothing it could run out on.
        let deadline = ruleSet.patterns.isEmpty ? nil : options.clock.now() + ruleSet.bot.decisionBudget
        self.matcher = MessageMatcher(ruleSet: ruleSet, text: message.text, maxBytes: options.maxMessageBytes,
                                      deadline: deadline, clock: options.clock)
    }

    consuming func decide() -> Decision {
        // The conversation remembers the language its customer writes in, for the texts per
        // language of messages that do not tell it ("ok"): a message that tells it clearly
        // changes it, one that barely tells (one word) only when none is known yet.
        earlierLanguage = state.language
        if ruleSet.speaksPerLanguage, let told = messageLanguage(), told.confident || state.language == nil {
            state.language = told.language
        }
        let waiting = state.owner == .waiting
        let candidates = options.trace ? Array(ruleSet.rules.indices) : matcher.candidateRules()
        var fired: [(rule: Rule, captures: [String: String])] = []
        var stopped: String?

        for index in candidates {
            let rule = ruleSet.rules[index]
            if let winner = stopped {
                guard options.trace else { break }
                record(rule, .notReached("'\(winner)' fired first"))
                continue
            }
            // `while_waiting: true` rules speak only while the conversation waits for an agent;
            // every other rule only while the bot owns it.
            if waiting != rule.whileWaiting {
                record(rule, .notReached(waiting
                    ? "the conversation is waiting for an agent and the rule has no 'while_waiting: true'"
                    : "the rule has 'while_waiting: true': it runs only while the conversation waits for an agent"))
                continue
            }
            guard rule.enabled else { record(rule, .disabled); continue }
            var captures: [String: String] = [:]
            if let when = rule.when, !holds(when, rule.id, &captures) {
                if options.trace {
                    let why = "when: " + explain(when, rule.id)
                    record(rule, .notMatched(why))
                }
                continue
            }
            if let unless = rule.unless {
                var ignored: [String: String] = [:]
                if holds(unless, rule.id, &ignored) {
                    if options.trace {
                        let why = "unless: " + describeHolding(unless, rule.id)
                        record(rule, .notMatched(why))
                    }
                    continue
                }
            }
            if rule.once, state.fires(of: rule.id) > 0 {
                record(rule, .blocked("once: already fired in this session"))
                continue
            }
            if let cooldown = rule.cooldown, let last = state.lastFired(rule.id), now.timeIntervalSince(last) < cooldown {
                let ago = now.timeIntervalSince(last)
                record(rule, .blocked("cooldown: fired \(Self.span(ago)) ago, cooldown is \(Self.span(cooldown))"))
                continue
            }
            record(rule, .fired)
            if options.trace, let when = rule.when { trace[trace.count - 1].matched = fuzzyMatches(when) }
            fired.append((rule, captures))
            if !rule.continues { stopped = rule.id }
        }

        let marksBefore = state.marks
        let outcome: Decision.Outcome
        if !fired.isEmpty {
            outcome = .fired(fired.map(\.rule.id))
            state.fallbacksInARow = 0
            for (rule, captures) in fired {
                state.recordFire(of: rule.id, at: now)
                apply(rule.actions, rule: rule.id, captures: captures)
            }
        } else if waiting {
            outcome = .silent(.waiting)
        } else if let fallback = ruleSet.fallback {
            outcome = .fallback
            state.recordFire(of: "fallback", at: now)
            apply(fallback, rule: "fallback", captures: [:])
            state.fallbacksInARow += 1
        } else {
            outcome = .noMatch
        }
        enforceLimits(marksBefore: marksBefore)
        let events = matcher.events
        let version = ruleSet.version
        let trace = options.trace ? self.trace : nil
        var decision = Decision(outcome: outcome, effects: effects, state: state, ruleSetVersion: version,
                                trace: trace, events: events)
        decision.limit = limit
        decision.language = language
        if matcher.outOfTime {
            decision.budgetExhausted = BudgetExhaustion(budget: ruleSet.bot.decisionBudget, rules: matcher.starvedRules)
        }
        return decision
    }

    /// Verdicts (and their texts) are only built when tracing.
    private mutating func record(_ rule: Rule, _ verdict: @autoclosure () -> RuleTrace.Verdict) {
        if options.trace { trace.append(RuleTrace(rule: rule.id, priority: rule.priority, verdict: verdict())) }
    }

    // MARK: Conditions

    private mutating func holds(_ c: Condition, _ rule: String, _ captures: inout [String: String]) -> Bool {
        switch c {
        case let .keywords(any, all, none):
            let hits = matcher.keywordHits()
            if !any.isEmpty, !any.contains(where: hits.contains) { return false }
            if !all.allSatisfy(hits.contains) { return false }
            return !none.contains(where: hits.contains)
        case let .regex(ids):
            for id in ids {
                if case let .match(caps) = matcher.match(pattern: id, rule: rule) {
                    captures.merge(caps) { a, _ in a }
                    return true
                }
            }
            return false
        case let .customerMessages(r): return r.contains(state.customerMessages)
        case let .botReplies(r): return r.contains(state.botReplies)
        case let .fallbacksInARow(r): return r.contains(state.fallbacksInARow)
        case let .idleFor(r): return r.contains(idle)
        case let .sessionAge(r): return r.contains(now.timeIntervalSince(state.sessionStartedAt ?? now))
        case let .schedule(i, inside):
            guard i >= 0, i < ruleSet.bot.schedules.count else { return false }
            return ruleSet.bot.schedules[i].contains(now, calendar: ruleSet.bot.calendar) == inside
        case let .tags(any, all, none):
            if !any.isEmpty, !any.contains(where: state.hasTag) { return false }
            if !all.allSatisfy(state.hasTag) { return false }
            return !none.contains(where: state.hasTag)
        case let .channel(g): return g.matches(state.channel)
        case let .locale(g): return g.matches(state.locale)
        case let .all(parts):
            for p in parts where !holds(p, rule, &captures) { return false }
            return true
        case let .any(parts):
            for p in parts where holds(p, rule, &captures) { return true }
            return false
        case let .not(inner):
            var ignored: [String: String] = [:]
            return !holds(inner, rule, &ignored)
        }
    }

    /// Why a condition does not hold (trace only).
    private mutating func explain(_ c: Condition, _ rule: String) -> String {
        var ignored: [String: String] = [:]
        switch c {
        case let .keywords(any, all, none):
            let hits = matcher.keywordHits()
            if !any.isEmpty, !any.contains(where: hits.contains) { return "no keyword of \(words(any))" }
            if let missing = all.first(where: { !hits.contains($0) }) { return "keyword '\(ruleSet.keywords.normalizedKeyword(missing))' is missing" }
            if let present = none.first(where: hits.contains) { return "keyword '\(ruleSet.keywords.normalizedKeyword(present))' is present" }
            return "keywords"
        case let .regex(ids):
            if let budget = ids.first(where: { matcher.match(pattern: $0, rule: rule) == .outOfTime }) {
                let spent = BudgetExhaustion.text(ruleSet.bot.decisionBudget)
                return budget == matcher.stoppedPattern
                    ? "regex '\(Self.abbreviate(ruleSet.patterns[budget].source))' ran out of the decision's time budget (\(spent)); counted as no match"
                    : "regex not run: the decision's time budget (\(spent)) was spent; counted as no match"
            }
            let limited = ids.filter { if case .limitHit = matcher.match(pattern: $0, rule: rule) { true } else { false } }
            if !limited.isEmpty { return "regex hit its \(limited.map { matcher.limitName($0) }.joined(separator: ", ")) (counted as no match)" }
            return "no match for regex " + ids.map { "'\(Self.abbreviate(ruleSet.patterns[$0].source))'" }.joined(separator: ", ")
        case let .customerMessages(r): return "customer_messages is \(state.customerMessages), needs \(r)"
        case let .botReplies(r): return "bot_replies is \(state.botReplies), needs \(r)"
        case let .fallbacksInARow(r): return "fallbacks_in_a_row is \(state.fallbacksInARow), needs \(r)"
        case let .idleFor(r): return "idle for \(Self.span(idle)), needs \(describe(r))"
        case let .sessionAge(r): return "session age \(Self.span(now.timeIntervalSince(state.sessionStartedAt ?? now))), needs \(describe(r))"
        case let .schedule(i, inside):
            let name = i >= 0 && i < ruleSet.bot.schedules.count ? ruleSet.bot.schedules[i].name : "?"
            return inside ? "outside \(name) at \(localTime())" : "during \(name) at \(localTime())"
        case let .tags(any, all, none):
            if !any.isEmpty, !any.contains(where: state.hasTag) {
                return any.count == 1 ? "tag '\(any[0])' is not set" : "none of the tags [\(any.joined(separator: ", "))] is set"
            }
            if let m = all.first(where: { !state.hasTag($0) }) { return "tag '\(m)' is missing" }
            if let p = none.first(where: state.hasTag) { return "tag '\(p)' is present" }
            return "tags"
        case let .channel(g): return "channel is \(state.channel.map { "'\($0)'" } ?? "not set"), needs '\(g)'"
        case let .locale(g): return "locale is \(state.locale.map { "'\($0)'" } ?? "not set"), needs '\(g)'"
        case let .all(parts):
            for p in parts where !holds(p, rule, &ignored) { return explain(p, rule) }
            return "all"
        case let .any(parts):
            // Each part says why it fails; "none of: no tag of …" would be a double negative.
            return (parts.count == 2 ? "both alternatives fail: " : "all \(parts.count) alternatives fail: ")
                + parts.map { explain($0, rule) }.joined(separator: "; ")
        case let .not(inner):
            return "not: " + describeHolding(inner, rule)
        }
    }

    /// What made a condition hold (for `unless` and `not` in traces).
    private mutating func describeHolding(_ c: Condition, _ rule: String) -> String {
        switch c {
        case let .keywords(any, all, none):
            let hits = matcher.keywordHits()
            let present = (any + all).filter(hits.contains)
            if !present.isEmpty { return "keyword \(words(present)) matched" }
            return "no keyword of \(words(none))"
        case .regex: return "regex matched"
        case let .all(parts): return parts.map { describeHolding($0, rule) }.joined(separator: " and ")
        case let .any(parts):
            var ignored: [String: String] = [:]
            for p in parts where holds(p, rule, &ignored) { return describeHolding(p, rule) }
            return "any"
        default: return "condition holds"
        }
    }

    /// The keywords of a condition that hold (outside `not`) and matched by form or typo, as
    /// "matched 'refund' (typo of 'refnd')"; nil when there are none.
    private mutating func fuzzyMatches(_ c: Condition) -> String? {
        var ids: [Int] = []
        func collect(_ c: Condition) {
            switch c {
            case let .keywords(any, all, _): ids += any + all
            case let .all(parts), let .any(parts): parts.forEach(collect)
            default: break
            }
        }
        collect(c)
        var seen = Set<Int>()
        var notes: [String] = []
        for id in ids where seen.insert(id).inserted {
            let keyword = ruleSet.keywords.normalizedKeyword(id)
            switch matcher.evidence(for: id) {
            case let .form(words)?: notes.append("matched '\(keyword)' (form of '\(words)')")
            case let .typo(words)?: notes.append("matched '\(keyword)' (typo of '\(words)')")
            case .exact?, nil: break
            }
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }

    private func words(_ ids: [Int]) -> String {
        let shown = ids.prefix(6).map { "'\(ruleSet.keywords.normalizedKeyword($0))'" }.joined(separator: ", ")
        return "[\(shown)\(ids.count > 6 ? ", … \(ids.count - 6) more" : "")]"
    }

    private func describe(_ r: TimeRange) -> String {
        r.atMost.map { "\(Self.span(r.atLeast))–\(Self.span($0))" } ?? "at least \(Self.span(r.atLeast))"
    }

    private func localTime() -> String {
        let c = ruleSet.bot.calendar.dateComponents([.weekday, .hour, .minute], from: now)
        let day = Schedule.weekdayNames[((c.weekday ?? 1) + 5) % 7]
        return "\(day) \(String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)) \(ruleSet.bot.timeZone.identifier)"
    }

    static func span(_ t: TimeInterval) -> String { DurationText.format(t) }

    /// Long patterns are cut for traces: the rule's file has the whole text.
    static func abbreviate(_ s: String) -> String { s.count <= 40 ? s : s.prefix(39) + "…" }
}
