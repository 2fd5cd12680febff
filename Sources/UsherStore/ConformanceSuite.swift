import Foundation
public import UsherEngine

/// The checks every `ChatStore` must pass (DESIGN.md §7), run by each adapter's tests against a
/// real backend: ordering, redelivery, duplicate delivery, equal timestamps, compare-and-set,
/// per-conversation order, racing commits, crashes between steps, leases, inbox, notifications.
///
/// Failures are returned as text, so the suite needs no test framework: a test asserts that the
/// list is empty.
public struct ConformanceSuite: Sendable {
    /// Makes a fresh, empty store for one check.
    public let makeStore: @Sendable () async throws -> any ChatStore

    public init(makeStore: @escaping @Sendable () async throws -> any ChatStore) {
        self.makeStore = makeStore
    }

    /// The names of the checks, for parameterised tests.
    public static let checks = [
        "ordering", "equal-timestamps", "redelivery", "duplicate-commit", "batch-after-duplicate", "compare-and-set",
        "per-conversation-order", "racing-commits", "crash-between-steps", "cursor", "leases", "claim-pending",
        "shares",
        "inbox", "notifications", "close-events", "transcript", "idempotent-append", "agent-overtakes",
    ]

    /// Runs one check; returns what went wrong (empty when it passed).
    public func run(_ check: String) async -> [String] {
        var failures: [String] = []
        func expect(_ ok: Bool, _ what: @autoclosure () -> String) { if !ok { failures.append("\(check): \(what())") } }
        do {
            let store = try await makeStore()
            defer { Task { try? await store.close() } }
            switch check {
            case "ordering": try await ordering(store, expect)
            case "equal-timestamps": try await equalTimestamps(store, expect)
            case "redelivery": try await redelivery(store, expect)
            case "duplicate-commit": try await duplicateCommit(store, expect)
            case "batch-after-duplicate": try await batchAfterDuplicate(store, expect)
            case "compare-and-set": try await compareAndSet(store, expect)
            case "per-conversation-order": try await perConversationOrder(store, expect)
            case "racing-commits": try await racingCommits(store, expect)
            case "crash-between-steps": try await crashBetweenSteps(store, expect)
            case "cursor": try await cursor(store, expect)
            case "leases": try await leases(store, expect)
            case "claim-pending": try await claimPending(store, expect)
            case "shares": try await shares(store, expect)
            case "inbox": try await inbox(store, expect)
            case "notifications": try await notifications(store, expect)
            case "close-events": try await closeEvents(store, expect)
            case "transcript": try await transcript(store, expect)
            case "idempotent-append": try await idempotentAppend(store, expect)
            case "agent-overtakes": try await agentOvertakes(store, expect)
            default: failures.append("unknown check '\(check)'")
            }
        } catch {
            failures.append("\(check): threw \(error)")
        }
        return failures
    }

    /// Every check.
    public func runAll() async -> [String] {
        var out: [String] = []
        for c in Self.checks { out += await run(c) }
        return out
    }

    typealias Expect = (Bool, @autoclosure () -> String) -> Void

    /// The bot the checks commit as.
    public static let bot = BotIdentity(id: "conf", name: "Conformance", senderID: "bot:conf")
    static let t0 = Date(timeIntervalSince1970: 1_764_468_000)

    private func customer(_ store: any ChatStore, _ conv: String, _ text: String, at: Date = t0, id: String? = nil) async throws -> StoredMessage {
        try await store.append(NewMessage(id: id ?? UUID().uuidString.lowercased(), conversationID: conv,
                                          from: .customer, senderID: "u-\(conv)", senderName: "Pooja", text: text, at: at))
    }

    /// The commit a worker would make for `m` after `old`: a reply (and a handoff with its
    /// notice and notification when asked), the owner after an agent's message, version + 1.
    /// Shared with the adapters' own tests.
    public static func sampleCommit(_ m: StoredMessage, after old: ConversationState?, reply: String?,
                                    handoff: Bool = false, expected: Int? = nil, bot: BotIdentity = bot) -> Commit {
        var state = old ?? ConversationState(conversationID: m.conversationID)
        state.customerMessages += m.from == .customer ? 1 : 0
        state.version += 1
        var effects: [Effect] = []
        if let reply { effects.append(.reply(text: reply, rule: "r")) }
        if handoff {
            state.owner = .waiting
            effects += [.system(text: "Connecting you to an agent.", rule: "h"),
                        .handoff(reason: "threshold", queue: "general", priority: .normal, rule: "h"),
                        .notify(text: "Pooja is waiting", queue: "general", reason: "threshold", rule: "h")]
        }
        if m.from == .agent { state.owner = .agent }
        let decision = Decision(outcome: .fired(["r"]), effects: effects, state: state, ruleSetVersion: "v1")
        return Commit(bot: bot, inbound: m, expectedVersion: expected ?? (old?.version ?? 0), expectedOwner: old?.owner,
                      decision: decision, at: m.at)
    }

    /// Builds the commit for `m` as the worker would and commits it.
    private func commit(_ store: any ChatStore, _ m: StoredMessage, reply: String? = nil, handoff: Bool = false,
                        expected: Int? = nil) async throws -> (Commit, CommitResult) {
        let old = try await store.state(bot: Self.bot.id, conversation: m.conversationID)
        let c = Self.sampleCommit(m, after: old, reply: reply, handoff: handoff, expected: expected)
        return (c, try await store.commit(c))
    }

    private func ordering(_ store: any ChatStore, _ expect: Expect) async throws {
        var written: [StoredMessage] = []
        for i in 0..<30 { written.append(try await customer(store, "c\(i % 3)", "m\(i)", at: Self.t0.addingTimeInterval(Double(i)))) }
        let pending = try await store.pending(bot: Self.bot.id, after: 0, limit: 100)
        expect(pending.map(\.id) == written.map(\.id), "pending returns every inbound message in arrival order")
        expect(zip(pending, pending.dropFirst()).allSatisfy { $0.seq < $1.seq }, "sequence numbers increase strictly")
        let limited = try await store.pending(bot: Self.bot.id, after: pending[9].seq, limit: 5)
        expect(limited.map(\.id) == Array(written[10..<15]).map(\.id), "pending after a cursor, with a limit")
    }

    private func equalTimestamps(_ store: any ChatStore, _ expect: Expect) async throws {
        // The seed tailed "last timestamp + 0.001" and lost these.
        for i in 0..<5 { _ = try await customer(store, "c", "same time \(i)", at: Self.t0) }
        let first = try await store.pending(bot: Self.bot.id, after: 0, limit: 2)
        let rest = try await store.pending(bot: Self.bot.id, after: first.last!.seq, limit: 10)
        expect(first.count + rest.count == 5, "all five messages with the same timestamp arrive (\(first.count) + \(rest.count))")
    }

    private func redelivery(_ store: any ChatStore, _ expect: Expect) async throws {
        let m = try await customer(store, "c", "hello")
        expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).map(\.id) == [m.id], "pending before commit")
        expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).map(\.id) == [m.id], "pending again: not consumed by reading")
        _ = try await commit(store, m, reply: "hi")
        expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).isEmpty, "done messages are not pending")
        expect(try await store.pending(bot: "other-bot", after: 0, limit: 10).map(\.id) == [m.id], "done is per bot")
    }

    private func duplicateCommit(_ store: any ChatStore, _ expect: Expect) async throws {
        let m = try await customer(store, "c", "hello")
        let (c, first) = try await commit(store, m, reply: "hi")
        let before = try await store.transcript(conversation: "c")
        let second = try await store.commit(c)
        let after = try await store.transcript(conversation: "c")
        expect(first == .committed && second == .duplicate, "the same commit twice: committed, then duplicate (got \(first), \(second))")
        expect(before == after && after.count == 2, "a duplicate commit writes nothing (\(after.count) messages)")
        expect(try await store.state(bot: Self.bot.id, conversation: "c")?.version == 1, "state written once")
    }

    /// A batch decided a conversation's two messages, the second from the state the first left;
    /// another writer did the first meanwhile, with another decision. The first is a duplicate,
    /// and the second is not written though the stored version is the one it expects
    /// (`BatchLinks`): it was decided from a state the store does not hold.
    private func batchAfterDuplicate(_ store: any ChatStore, _ expect: Expect) async throws {
        let m1 = try await customer(store, "c", "one"), m2 = try await customer(store, "c", "two")
        var theirs = Self.sampleCommit(m1, after: nil, reply: "theirs")
        theirs.state.tags = ["theirs"]
        expect(try await store.commit(theirs) == .committed, "another writer commits the first message")
        let mine = Self.sampleCommit(m1, after: nil, reply: "mine")
        let next = Self.sampleCommit(m2, after: mine.state, reply: "mine too")
        let results = try await store.commit(batch: [mine, next])
        expect(results == [.duplicate, .conflict], "the first done, the second decided from its state not written (got \(results))")
        let stored = try await store.state(bot: Self.bot.id, conversation: "c")
        expect(stored?.tags == ["theirs"] && stored?.version == 1, "the state is the other writer's (\(String(describing: stored)))")
        let again = Self.sampleCommit(m2, after: stored, reply: "after theirs")
        expect(try await store.commit(batch: [again]) == [.committed], "decided again from the stored state, it commits")
        let replies = try await store.transcript(conversation: "c").filter { $0.from == .bot }.map(\.text)
        expect(replies == ["theirs", "after theirs"], "replies: \(replies)")
    }

    private func compareAndSet(_ store: any ChatStore, _ expect: Expect) async throws {
        let m1 = try await customer(store, "c", "one")
        _ = try await commit(store, m1, reply: "1")
        let m2 = try await customer(store, "c", "two")
        let (_, stale) = try await commit(store, m2, reply: "2", expected: 0)
        expect(stale == .conflict, "a commit with a stale version conflicts (got \(stale))")
        expect(try await store.transcript(conversation: "c").count == 3, "a conflicting commit writes nothing")
        let (_, fresh) = try await commit(store, m2, reply: "2")
        expect(fresh == .committed, "the retry with the current version commits (got \(fresh))")
    }

    private func perConversationOrder(_ store: any ChatStore, _ expect: Expect) async throws {
        let m1 = try await customer(store, "c", "one")
        let m2 = try await customer(store, "c", "two")
        let other = try await customer(store, "d", "other")
        let (_, early) = try await commit(store, m2, reply: "2")
        expect(early == .outOfOrder, "the second message cannot commit before the first (got \(early))")
        let (_, d) = try await commit(store, other, reply: "x")
        expect(d == .committed, "other conversations are not held up (got \(d))")
        _ = try await commit(store, m1, reply: "1")
        let (_, late) = try await commit(store, m2, reply: "2")
        expect(late == .committed, "in order it commits (got \(late))")
        let replies = try await store.transcript(conversation: "c").filter { $0.from == .bot }.map(\.text)
        expect(replies == ["1", "2"], "replies in order: \(replies)")
    }

    private func racingCommits(_ store: any ChatStore, _ expect: Expect) async throws {
        let m = try await customer(store, "c", "hello")
        let decision = Decision(outcome: .fired(["r"]), effects: [.reply(text: "hi", rule: "r")],
                                state: { var s = ConversationState(conversationID: "c"); s.version = 1; return s }(),
                                ruleSetVersion: "v1", trace: nil, events: [])
        let c = Commit(bot: Self.bot, inbound: m, expectedVersion: 0, decision: decision, at: m.at)
        let results = try await withThrowingTaskGroup(of: CommitResult.self) { group in
            for _ in 0..<8 { group.addTask { try await store.commit(c) } }
            var all: [CommitResult] = []
            for try await r in group { all.append(r) }
            return all
        }
        expect(results.filter { $0 == .committed }.count == 1, "exactly one of 8 racing commits wins: \(results)")
        let replies = try await store.transcript(conversation: "c").filter { $0.from == .bot }
        expect(replies.count == 1, "one reply, not \(replies.count)")
    }

    private func crashBetweenSteps(_ store: any ChatStore, _ expect: Expect) async throws {
        // Read, decide, crash before commit: the message is still pending, nothing was written.
        let m = try await customer(store, "c", "hello")
        _ = try await store.pending(bot: Self.bot.id, after: 0, limit: 10)
        _ = try await store.state(bot: Self.bot.id, conversation: "c")
        expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).map(\.id) == [m.id], "still pending after a crash before commit")
        // Commit, crash before advancing the cursor: not pending again, cursor catches up later.
        _ = try await commit(store, m, reply: "hi")
        expect(try await store.pending(bot: Self.bot.id, after: try await store.cursor(bot: Self.bot.id), limit: 10).isEmpty,
               "committed messages are not redelivered even with a stale cursor")
        // Deciding again after a crash that did commit: a duplicate, no second reply.
        let (_, again) = try await commit(store, m, reply: "hi", expected: 0)
        expect(again == .duplicate, "re-deciding a committed message is a duplicate (got \(again))")
        expect(try await store.transcript(conversation: "c").filter { $0.from == .bot }.count == 1, "one reply")
    }

    private func cursor(_ store: any ChatStore, _ expect: Expect) async throws {
        let a = try await customer(store, "a", "1")
        let b = try await customer(store, "b", "2")
        _ = try await customer(store, "a", "3")
        expect(try await store.cursor(bot: Self.bot.id) == 0, "a new bot's cursor is 0")
        _ = try await commit(store, b, reply: "x")
        try await store.advanceCursor(bot: Self.bot.id)
        expect(try await store.cursor(bot: Self.bot.id) == a.seq - 1, "the cursor stops below the oldest message not done")
        _ = try await commit(store, a, reply: "y")
        try await store.advanceCursor(bot: Self.bot.id)
        let c = try await store.cursor(bot: Self.bot.id)
        let pending = try await store.pending(bot: Self.bot.id, after: c, limit: 10)
        expect(pending.map(\.text) == ["3"], "after advancing, only the undone message is pending: \(pending.map(\.text))")
    }

    private func claimPending(_ store: any ChatStore, _ expect: Expect) async throws {
        let until = Date().addingTimeInterval(30)
        let bot = Self.bot.id
        let x1 = try await customer(store, "x", "1")
        let y1 = try await customer(store, "y", "2")
        let x2 = try await customer(store, "x", "3")
        // B holds y: A reads x's messages only, in order, and now holds x.
        let held = try await store.claim(bot: bot, conversations: ["y"], worker: "B", until: until)
        expect(held == ["y"], "B claims y")
        let read = try await store.claimPending(bot: bot, after: 0, limit: 10, worker: "A", until: until, skipping: [:],
                                                holds: { _ in false })
        let a = read.messages
        expect(a.map(\.id) == [x1.id, x2.id], "A reads the conversations no one else holds, in order: \(a.map(\.text))")
        expect(read.readThrough >= x2.seq, "the read covers what it returned and passed over: \(read.readThrough) < \(x2.seq)")
        let b = try await store.claimPending(bot: bot, after: 0, limit: 10, worker: "B", until: until, skipping: [:], holds: { $0 == "y" }).messages
        expect(b.map(\.id) == [y1.id], "B reads its own conversation only, not A's: \(b.map(\.text))")
        // A renews what it holds; done messages are not read again.
        _ = try await commit(store, x1, reply: "ok")
        let again = try await store.claimPending(bot: bot, after: 0, limit: 10, worker: "A", until: until, skipping: [:], holds: { $0 == "x" }).messages
        expect(again.map(\.id) == [x2.id], "a held conversation's next message, not the done one: \(again.map(\.text))")
        // Released, y goes to whoever reads next.
        try await store.release(bot: bot, worker: "B")
        let taken = try await store.claimPending(bot: bot, after: 0, limit: 10, worker: "A", until: until, skipping: [:], holds: { $0 == "x" }).messages
        expect(taken.map(\.id) == [y1.id, x2.id], "a released conversation can be claimed: \(taken.map(\.text))")
        let none = try await store.claimPending(bot: bot, after: 0, limit: 10, worker: "B", until: until, skipping: [:], holds: { _ in false }).messages
        expect(none.isEmpty, "B gets nothing while A holds both: \(none.map(\.text))")
        // The conversations of A's batches in flight are skipped: y, its batch read before y1.
        let skippedRead = try await store.claimPending(bot: bot, after: 0, limit: 10, worker: "A", until: until,
                                                       skipping: ["y": y1.seq - 1], holds: { $0 == "x" || $0 == "y" })
        let skipped = skippedRead.messages
        expect(skipped.map(\.id) == [x2.id], "conversations in flight are skipped: \(skipped.map(\.text))")
        expect(skippedRead.readThrough < y1.seq,
               "a read does not cover a message it skipped as in flight and unread: \(skippedRead.readThrough) ≥ \(y1.seq)")
        // y1 itself in flight: the read covers it (the next read does not walk it again).
        let pastRead = try await store.claimPending(bot: bot, after: 0, limit: 10, worker: "A", until: until,
                                                    skipping: ["y": y1.seq], holds: { $0 == "x" || $0 == "y" })
        expect(pastRead.messages.map(\.id) == [x2.id], "conversations in flight are skipped: \(pastRead.messages.map(\.text))")
        expect(pastRead.readThrough >= x2.seq,
               "a read covers the messages in flight it skipped: \(pastRead.readThrough) < \(x2.seq)")
    }

    /// Two workers reading shares 1/2 and 2/2 read every conversation once between them; a
    /// release keeps what it is told to; `members` lists the caller among the live workers.
    private func shares(_ store: any ChatStore, _ expect: Expect) async throws {
        let until = Date().addingTimeInterval(30)
        let bot = Self.bot.id
        var all: [String] = []
        for i in 0..<12 { all.append(try await customer(store, "s\(i)", "\(i)").id) }
        func read(_ worker: String, _ share: Share) async throws -> [StoredMessage] {
            try await store.claimPending(bot: bot, after: 0, limit: 100, worker: worker, until: until, skipping: [:], share: share,
                                         holds: { _ in false }).messages
        }
        let a = try await read("A", Share(index: 0, count: 2))
        let b = try await read("B", Share(index: 1, count: 2))
        expect(Set(a.map(\.id)).isDisjoint(with: b.map(\.id)), "the shares are disjoint: \(a.map(\.text)) and \(b.map(\.text))")
        expect((a + b).map(\.id).sorted() == all.sorted(), "the shares cover every conversation: \(a.map(\.text)) and \(b.map(\.text))")
        expect(a.map(\.seq) == a.map(\.seq).sorted(), "a share is read in order")
        // A gives up all it holds but one; B, reading everything now, gets the rest.
        guard let kept = a.first?.conversationID else { return expect(false, "share 1/2 of 12 conversations is empty") }
        try await store.release(bot: bot, worker: "A", keeping: [kept])
        let after = try await read("B", .all)
        expect(Set(after.map(\.conversationID)) == Set(all.indices.map { "s\($0)" }).subtracting([kept]),
               "after A's release B gets all but the one A kept (\(kept)): \(after.map(\.conversationID))")
        let members = try await store.members(group: "usher:workers:" + bot, worker: "A", until: until)
        expect(members.contains("A") && members == members.sorted(), "members lists the caller, sorted: \(members)")
    }

    private func leases(_ store: any ChatStore, _ expect: Expect) async throws {
        let until = Date().addingTimeInterval(30)
        let a = try await store.claim(bot: Self.bot.id, conversations: ["x", "y"], worker: "A", until: until)
        let b = try await store.claim(bot: Self.bot.id, conversations: ["y", "z"], worker: "B", until: until)
        expect(a == ["x", "y"] && b == ["z"], "a held conversation cannot be claimed by another worker: A \(a), B \(b)")
        let again = try await store.claim(bot: Self.bot.id, conversations: ["y"], worker: "A", until: until)
        expect(again == ["y"], "a worker can renew its own lease")
        try await store.release(bot: Self.bot.id, worker: "A")
        let after = try await store.claim(bot: Self.bot.id, conversations: ["x", "y"], worker: "B", until: until)
        expect(after == ["x", "y"], "released conversations can be claimed: \(after)")
        let expired = try await store.claim(bot: Self.bot.id, conversations: ["q"], worker: "A", until: Date().addingTimeInterval(-1))
        let taken = try await store.claim(bot: Self.bot.id, conversations: ["q"], worker: "B", until: until)
        expect(expired == ["q"] && taken == ["q"], "an expired lease can be taken over")
    }

    private func inbox(_ store: any ChatStore, _ expect: Expect) async throws {
        let first = try await customer(store, "late", "help", at: Self.t0)
        _ = try await commit(store, first, handoff: true)
        try await Task.sleep(for: .milliseconds(20))
        let second = try await customer(store, "later", "help", at: Self.t0)
        _ = try await commit(store, second, handoff: true)
        let third = try await customer(store, "served", "hi")
        _ = try await commit(store, third, reply: "hello")
        let inbox = try await store.inbox(bot: Self.bot.id)
        expect(inbox.map(\.conversationID) == ["late", "later"], "waiting conversations, oldest first: \(inbox.map(\.conversationID))")
        expect(inbox.first?.queue == "general" && inbox.first?.reason == "threshold", "queue and reason recorded")
        expect(inbox.first?.lastMessage == "help", "the last customer message is shown")
        let agent = try await store.append(NewMessage(conversationID: "late", from: .agent, senderID: "agent:li", text: "I'm here"))
        _ = try await commit(store, agent)
        expect(try await store.inbox(bot: Self.bot.id).map(\.conversationID) == ["later"], "once an agent writes, it leaves the inbox")
    }

    private func notifications(_ store: any ChatStore, _ expect: Expect) async throws {
        expect(try await store.lastNotificationSeq() == 0, "no notification yet: the last seq is 0")
        for i in 0..<3 {
            let m = try await customer(store, "n\(i)", "help")
            _ = try await commit(store, m, handoff: true)
        }
        let all = try await store.notifications(after: 0, limit: 10)
        expect(all.map(\.notification.conversationID) == ["n0", "n1", "n2"], "notifications in order: \(all.map(\.notification.conversationID))")
        expect(zip(all, all.dropFirst()).allSatisfy { $0.seq < $1.seq }, "notification sequence numbers increase")
        expect(try await store.notifications(after: all[0].seq, limit: 10).count == 2, "notifications after a sequence number")
        expect(all.first?.notification.lastMessage == "help" && all.first?.notification.isHandoff == true, "notification fields")
        let last = try await store.lastNotificationSeq()
        expect(last == all.last?.seq, "the last notification's seq: \(last)")
    }

    private func closeEvents(_ store: any ChatStore, _ expect: Expect) async throws {
        let m = try await customer(store, "c", "hi")
        _ = try await commit(store, m, reply: "hello")
        _ = try await store.append(NewMessage(conversationID: "c", kind: .close, from: .system, text: ""))
        let pending = try await store.pending(bot: Self.bot.id, after: 0, limit: 10)
        expect(pending.map(\.kind) == [.close], "a close event is inbound: \(pending.map(\.kind))")
    }

    private func transcript(_ store: any ChatStore, _ expect: Expect) async throws {
        let m = try await customer(store, "c", "hello")
        _ = try await commit(store, m, reply: "hi", handoff: true)
        let t = try await store.transcript(conversation: "c")
        expect(t.map(\.from) == [.customer, .bot, .system], "customer, reply, system notice: \(t.map(\.from))")
        expect(t.dropFirst().allSatisfy { $0.senderID == "bot:conf" }, "bot messages carry the bot's sender id")
        expect(t[1].ruleID == "r", "the reply names its rule")
        expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).isEmpty, "the bot's own messages are never inbound")
    }

    private func agentOvertakes(_ store: any ChatStore, _ expect: Expect) async throws {
        let m = try await customer(store, "c", "hello")
        _ = try await store.append(NewMessage(conversationID: "c", from: .agent, senderID: "agent:li", text: "Li here"))
        let (_, result) = try await commit(store, m, reply: "hi")
        expect(result == .silenced, "the customer message is done, its reply not written: silenced (got \(result))")
        let t = try await store.transcript(conversation: "c")
        expect(t.map(\.from) == [.customer, .agent], "no reply lands after the agent's message: \(t.map(\.from))")
        expect(try await store.pending(bot: Self.bot.id, after: 0, limit: 10).map(\.from) == [.agent], "the agent message is still to be decided")
    }

    private func idempotentAppend(_ store: any ChatStore, _ expect: Expect) async throws {
        let a = try await customer(store, "c", "hello", id: "same-id")
        let b = try await customer(store, "c", "hello", id: "same-id")
        expect(a.seq == b.seq, "appending the same message id twice keeps one message")
        expect(try await store.transcript(conversation: "c").count == 1, "one row")
    }
}
