import Foundation
import UsherJSON
import UsherRules
import UsherText

extension Evaluation {
    /// Turns a rule's actions into effects and state changes.
    /// The value of a template variable: a capture of the rule's regex, or a built-in.
    func variable(_ name: String, _ captures: [String: String]) -> String? {
        if let v = captures[name] { return v }
        switch name {
        case "customer.name": return state.customerName
        case "customer.id": return state.customerID
        case "conversation.id": return state.conversationID
        case "conversation.customer_messages": return String(state.customerMessages)
        case "conversation.bot_replies": return String(state.botReplies)
        case "conversation.channel": return state.channel
        case "conversation.locale": return state.locale
        case "bot.name": return ruleSet.bot.name
        case "bot.id": return ruleSet.bot.id
        default:
            return name.hasPrefix("metadata.") ? state.metadata[String(name.dropFirst(9))] : nil
        }
    }

    func render(_ t: Template, _ captures: [String: String]) -> String {
        t.render { variable($0, captures) }
    }

    /// A notice in the customer's language when it is written per language (`choose`).
    mutating func render(_ text: LocalizedTemplate, _ captures: [String: String]) -> String {
        switch text {
        case let .text(t): render(t, captures)
        case let .languages(texts): render(texts[choose(texts.map(\.language))].template, captures)
        }
    }

    /// Turns a rule's actions into effects and state changes.
    mutating func apply(_ actions: [Action], rule: String, captures: [String: String]) {
        let fires = max(1, state.fires(of: rule))
        for action in actions {
            switch action {
            case let .reply(reply):
                var reply = reply
                if case let .languages(replies) = reply.form { reply = replies[choose(replies.map(\.language))].reply }
                let template: Template
                switch reply.form {
                case let .text(t): template = t
                case let .sequence(ts): template = ts[min(fires, ts.count) - 1]
                case let .variants(ts):
                    let seed = FNV1a.hash(state.conversationID + "\u{0}" + rule)
                    template = ts[Int((seed &+ UInt64(fires - 1)) % UInt64(ts.count))]
                case let .languages(replies):   // never nested: the compiler allows one level
                    template = replies[0].reply.texts[0]
                }
                // A title rendered empty (a capture that did not match) would be a blank button
                // or link: it is left out, and the others shown.
                let quickReplies = reply.quickReplies.compactMap { q -> QuickReply? in
                    let title = render(q.title, captures)
                    guard !title.allSatisfy(\.isWhitespace) else { return nil }
                    return QuickReply(title: title,
                                      url: q.url.map { url in url.render({ variable($0, captures) }, encoding: QuickReplyTemplate.encodeForURL) })
                }
                effects.append(.reply(text: render(template, captures), rule: rule, quickReplies: quickReplies))
                state.botReplies += 1
                state.recentReplies.append(now)
            case let .system(t):
                let text = render(t, captures)
                effects.append(.system(text: text, rule: rule))
            case let .handoff(h):
                let message = render(h.message ?? ruleSet.bot.handoff.systemMessage, captures)
                handOff(reason: h.reason, queue: h.queue, priority: h.priority, message: message, rule: rule)
            case let .tag(t):
                if !state.tags.contains(t) { state.tags.append(t); state.tags.sort() }
                effects.append(.tag(t))
            case let .untag(t):
                state.tags.removeAll { $0 == t }
                effects.append(.untag(t))
            case let .notify(text, queue):
                effects.append(.notify(text: render(text, captures), queue: queue ?? ruleSet.bot.handoff.queue,
                                       reason: rule, rule: rule))
            case let .set(entries):
                for e in entries {
                    let v = render(e.value, captures)
                    state.metadata[e.key] = v
                    effects.append(.set(key: e.key, value: v))
                }
            }
        }
    }

    /// Of texts written in `languages` (a reply's or a notice's, in the file's order), the
    /// index of the one in the customer's language: the conversation's locale when there is a
    /// text in it, else the language the message tells clearly, else the language of the
    /// conversation's earlier messages (`ConversationState.language`), else the language the
    /// message barely tells (one word), else the bot's first language, else the first written.
    /// The first choice of a decision is recorded in `language`.
    mutating func choose(_ languages: [String]) -> Int {
        func has(_ code: String?) -> Int? { code.flatMap { languages.firstIndex(of: $0) } }
        let told = messageLanguage()
        let choice: (index: Int, reason: LanguageChoice.Reason)
        if let locale = state.locale, let i = has(Self.language(ofLocale: locale)) {
            choice = (i, .locale(locale))
        } else if let told, told.confident, let i = has(told.language) {
            choice = (i, .detected)
        } else if let i = has(earlierLanguage) {
            choice = (i, .conversation)
        } else if let i = has(told?.language) {
            choice = (i, .detected)
        } else if let i = has(ruleSet.bot.languages.first) {
            choice = (i, .botLanguage)
        } else {
            choice = (0, .firstListed)
        }
        if language == nil { language = LanguageChoice(language: languages[choice.index], reason: choice.reason) }
        return choice.index
    }

    /// `es-MX`, `es_MX`, `ES` → `es`.
    static func language(ofLocale locale: String) -> String? {
        let code = locale.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() }
        return code?.isEmpty == false ? code : nil
    }

    /// The message's language among the bot's, worked out once per decision.
    mutating func messageLanguage() -> LanguageGuess.Guess? {
        if let known = detectedLanguage { return known }
        let guess = LanguageGuess(languages: ruleSet.bot.languages, dictionaries: ruleSet.bot.dictionaries)
            .guess(matcher.normalizedText())
        detectedLanguage = .some(guess)
        return guess
    }

    mutating func handOff(reason: String, queue: String?, priority: HandoffPriority?, message: String, rule: String) {
        let q = queue ?? ruleSet.bot.handoff.queue
        if !message.isEmpty { effects.append(.system(text: message, rule: rule)) }
        effects.append(.handoff(reason: reason, queue: q, priority: priority ?? .normal, rule: rule))
        if ruleSet.bot.handoff.notify {
            let who = state.customerName ?? "A customer"
            effects.append(.notify(text: "\(who) is waiting for an agent (\(reason))", queue: q, reason: reason, rule: rule))
        }
        state.owner = .waiting
    }

    /// `max_bot_replies` and the loop guard: when this decision's replies would cross a limit,
    /// the conversation is handed off instead (or, already waiting, the replies are dropped).
    /// `marksBefore`: the rule marks before this decision, restored for rules whose replies are
    /// dropped — a reply the customer never saw does not start a cooldown, use up a `once` or
    /// advance a sequence.
    mutating func enforceLimits(marksBefore: [RuleMark]) {
        var replies = 0
        for e in effects { if case .reply = e { replies += 1 } }
        guard replies > 0 else { return }
        let before = state.botReplies - replies
        var kind: ReplyLimit.Kind?
        if let max = ruleSet.bot.maxBotReplies, before + replies > max {
            kind = .maxBotReplies(max)
        }
        if let g = ruleSet.bot.loopGuard {
            // Keep only the replies inside the window (at most one more than allowed), so the
            // state stays small.
            let expired = state.recentReplies.firstIndex { now.timeIntervalSince($0) < g.within } ?? state.recentReplies.count
            if expired > 0 { state.recentReplies.removeFirst(expired) }
            if state.recentReplies.count > g.replies + 1 { state.recentReplies.removeFirst(state.recentReplies.count - g.replies - 1) }
            if kind == nil, state.recentReplies.count > g.replies { kind = .loopGuard(g) }
        } else if !state.recentReplies.isEmpty {
            state.recentReplies.removeAll()
        }
        guard let kind else { return }
        var silenced: [String] = []
        for e in effects { if case let .reply(_, rule, _) = e, !silenced.contains(rule) { silenced.append(rule) } }
        state.marks = state.marks.compactMap { mark in
            guard silenced.contains(mark.rule) else { return mark }
            return marksBefore.first { $0.rule == mark.rule }
        }
        effects.removeAll { if case .reply = $0 { true } else { false } }
        state.botReplies = before
        state.recentReplies.removeLast(min(replies, state.recentReplies.count))
        let hit = ReplyLimit(kind: kind, rules: silenced, handedOff: state.owner == .bot)
        limit = hit
        if hit.handedOff {
            var notice = ruleSet.bot.handoff.systemMessage
            if case let .loopGuard(g) = kind, let own = g.message { notice = own }
            handOff(reason: hit.reason, queue: nil, priority: nil, message: render(notice, [:]), rule: hit.reason)
        }
    }
}
