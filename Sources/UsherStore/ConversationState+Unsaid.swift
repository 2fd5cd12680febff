public import UsherEngine

extension ConversationState {
    /// This state without the replies a store did not write because a person spoke first
    /// (`CommitResult.silenced`): they do not count in `bot_replies` or the loop guard, and the
    /// rules that wrote them are as they were before (`before`: the state the first silenced
    /// decision was made from; nil: none) — a reply the customer never saw does not use up a
    /// `once`, advance a sequence or start a cooldown, as when the engine itself drops replies
    /// over a limit. Notices are not replies: the handoff they announce happened.
    public func unsaying(_ dropped: [OutgoingMessage], before: ConversationState?) -> ConversationState {
        let replies = dropped.filter { $0.from == .bot }
        if replies.isEmpty { return self }
        var s = self
        s.botReplies = max(0, s.botReplies - replies.count)
        s.recentReplies.removeLast(min(replies.count, s.recentReplies.count))
        let rules = Set(replies.map(\.ruleID))
        s.marks = s.marks.compactMap { mark in
            guard rules.contains(mark.rule) else { return mark }
            return before?.marks.first { $0.rule == mark.rule }
        }
        return s
    }
}
