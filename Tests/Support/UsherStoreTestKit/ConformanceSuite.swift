import Foundation
public import UsherEngine
public import UsherStore

/// What a store can do beyond the core (`ChatStore`): each conformance check needs one.
public enum StoreCapability: String, Sendable, CaseIterable {
    /// The core contract alone.
    case core
    /// `SequencedStore`: positions are store-wide sequence numbers.
    case sequenced
    /// `SharedStore`: leases, shares, claim-and-read.
    case shared
    /// `NotificationStore`: the notifications commits raised, in order.
    case notifications
    /// `BackendStore`: append, transcript, inbox as a backend would.
    case backend

    /// Whether `store` has it.
    public func isOffered(by store: any ChatStore) -> Bool {
        switch self {
        case .core: true
        case .sequenced: store is any SequencedStore
        case .shared: store is any SharedStore
        case .notifications: store is any NotificationStore
        case .backend: store is any BackendStore
        }
    }

    /// Every capability `store` offers.
    public static func offered(by store: any ChatStore) -> Set<StoreCapability> {
        Set(allCases.filter { $0.isOffered(by: store) })
    }
}

/// One check of the conformance kit (DESIGN.md §7), and the capability it needs.
public enum ConformanceCheck: String, Sendable, CaseIterable, CustomStringConvertible {
    case ordering, equalTimestamps, redelivery, duplicateCommit, batchAfterDuplicate, compareAndSet,
         perConversationOrder, racingCommits, crashBetweenSteps, position, closeEvents, agentOvertakes, replies,
         quickReplies
    case sequenceNumbers, cursor
    case leases, claimPending, shares
    case notifications
    case inbox, idempotentAppend

    public var capability: StoreCapability {
        switch self {
        case .ordering, .equalTimestamps, .redelivery, .duplicateCommit, .batchAfterDuplicate, .compareAndSet,
             .perConversationOrder, .racingCommits, .crashBetweenSteps, .position, .closeEvents, .agentOvertakes, .replies,
             .quickReplies:
            .core
        case .sequenceNumbers, .cursor: .sequenced
        case .leases, .claimPending, .shares: .shared
        case .notifications: .notifications
        case .inbox, .idempotentAppend: .backend
        }
    }

    /// The checks a store with `capabilities` (besides the core) must pass.
    public static func checks(for capabilities: Set<StoreCapability>) -> [ConformanceCheck] {
        allCases.filter { $0.capability == .core || capabilities.contains($0.capability) }
    }

    public var description: String { rawValue }
}

/// A store under test and the backend beside it: how the checks write customers' and agents'
/// messages and read back what the bot wrote. For a `BackendStore` that is the store itself; a
/// store that is only a view of another system's chat (Firestore's documents, a webhook's
/// queue) passes functions that write and read there as the backend would.
public struct ConformanceSubject: Sendable {
    public var store: any ChatStore
    public var append: @Sendable (NewMessage) async throws -> StoredMessage
    public var transcript: @Sendable (String) async throws -> [StoredMessage]

    public init(store: any ChatStore, append: @escaping @Sendable (NewMessage) async throws -> StoredMessage,
                transcript: @escaping @Sendable (String) async throws -> [StoredMessage]) {
        self.store = store
        self.append = append
        self.transcript = transcript
    }

    /// A store that is its own backend.
    public init(_ store: any BackendStore) {
        self.init(store: store, append: { try await store.append($0) }, transcript: { try await store.transcript(conversation: $0) })
    }
}

/// The checks every store must pass, run by each adapter's tests against a real backend, each
/// check by the capabilities it needs (`ConformanceCheck.capability`): ordering, redelivery,
/// duplicate delivery, equal timestamps, compare-and-set, per-conversation order, racing commits,
/// crashes between steps, positions; then cursors, leases, shares, notifications, inbox.
///
/// Failures are returned as text, so the kit needs no test framework: a test asserts that the
/// list is empty.
public struct ConformanceSuite: Sendable {
    /// Makes a fresh, empty store (and its backend) for one check.
    public let makeSubject: @Sendable () async throws -> ConformanceSubject

    public init(makeSubject: @escaping @Sendable () async throws -> ConformanceSubject) {
        self.makeSubject = makeSubject
    }

    /// A suite over a store that is its own backend.
    public init(makeStore: @escaping @Sendable () async throws -> any BackendStore) {
        self.init(makeSubject: { ConformanceSubject(try await makeStore()) })
    }

    /// Runs one check; returns what went wrong (empty when it passed). A check whose capability
    /// the store does not offer fails: a test lists the checks of the capabilities it claims.
    public func run(_ check: ConformanceCheck) async -> [String] {
        var failures: [String] = []
        func expect(_ ok: Bool, _ what: @autoclosure () -> String) { if !ok { failures.append("\(check): \(what())") } }
        var opened: (any ChatStore)?
        do {
            let subject = try await makeSubject()
            let store = subject.store
            opened = store
            guard check.capability.isOffered(by: store) else {
                try? await store.close()
                return ["\(check): the store does not offer the capability '\(check.capability)' this check needs"]
            }
            let s = Subject(subject)
            switch check {
            case .ordering: try await ordering(s, expect)
            case .equalTimestamps: try await equalTimestamps(s, expect)
            case .redelivery: try await redelivery(s, expect)
            case .duplicateCommit: try await duplicateCommit(s, expect)
            case .batchAfterDuplicate: try await batchAfterDuplicate(s, expect)
            case .compareAndSet: try await compareAndSet(s, expect)
            case .perConversationOrder: try await perConversationOrder(s, expect)
            case .racingCommits: try await racingCommits(s, expect)
            case .crashBetweenSteps: try await crashBetweenSteps(s, expect)
            case .position: try await position(s, expect)
            case .closeEvents: try await closeEvents(s, expect)
            case .agentOvertakes: try await agentOvertakes(s, expect)
            case .replies: try await replies(s, expect)
            case .quickReplies: try await quickReplies(s, expect)
            case .sequenceNumbers: try await sequenceNumbers(s, store as! any SequencedStore, expect)
            case .cursor: try await cursor(s, store as! any SequencedStore, expect)
            case .leases: try await leases(store as! any SharedStore, expect)
            case .claimPending: try await claimPending(s, store as! any SharedStore, expect)
            case .shares: try await shares(s, store as! any SharedStore, expect)
            case .notifications: try await notifications(s, store as! any NotificationStore, expect)
            case .inbox: try await inbox(s, store as! any BackendStore, expect)
            case .idempotentAppend: try await idempotentAppend(s, expect)
            }
        } catch {
            failures.append("\(check): threw \(error)")
        }
        try? await opened?.close()
        return failures
    }

    /// The subject with the reads the checks repeat.
    struct Subject {
        let store: any ChatStore
        let backend: ConformanceSubject
        init(_ subject: ConformanceSubject) { store = subject.store; backend = subject }

        /// Everything pending from `position`, page by page.
        func pending(after position: StorePosition = .start, limit: Int = 10) async throws -> [StoredMessage] {
            try await store.pending(bot: ConformanceSuite.bot.id, after: position, limit: limit).messages
        }

        func transcript(_ conversation: String) async throws -> [StoredMessage] { try await backend.transcript(conversation) }
    }

    typealias Expect = (Bool, @autoclosure () -> String) -> Void

    /// The bot the checks commit as.
    public static let bot = BotIdentity(id: "conf", name: "Conformance", senderID: "bot:conf")
    static let t0 = Date(timeIntervalSince1970: 1_764_468_000)

    private func customer(_ s: Subject, _ conv: String, _ text: String, at: Date = t0, id: String? = nil) async throws -> StoredMessage {
        try await s.backend.append(NewMessage(id: id ?? UUID().uuidString.lowercased(), conversationID: conv,
                                          from: .customer, senderID: "u-\(conv)", senderName: "Pooja", text: text, at: at))
    }

    /// The commit a worker would make for `m` after `old`: a reply (and a handoff with its
    /// notice and notification when asked), the owner after an agent's message, version + 1.
    /// Shared with the adapters' own tests.
    public static func sampleCommit(_ m: StoredMessage, after old: ConversationState?, reply: String?,
                                    handoff: Bool = false, expected: Int? = nil, bot: BotIdentity = bot,
                                    quickReplies: [QuickReply] = []) -> Commit {
        var state = old ?? ConversationState(conversationID: m.conversationID)
        state.customerMessages += m.from == .customer ? 1 : 0
        state.version += 1
        var effects: [Effect] = []
        if let reply { effects.append(.reply(text: reply, rule: "r", quickReplies: quickReplies)) }
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

    private func ordering(_ s: Subject, _ expect: Expect) async throws {
        var written: [StoredMessage] = []
        for i in 0..<30 { written.append(try await customer(s, "c\(i % 3)", "m\(i)", at: Self.t0.addingTimeInterval(Double(i)))) }
        let pending = try await s.pending(limit: 100)
        expect(pending.map(\.id) == written.map(\.id), "pending returns every inbound message in arrival order")
        let first = try await s.store.pending(bot: Self.bot.id, after: .start, limit: 10)
        let limited = try await s.pending(after: first.end, limit: 5)
        expect(first.messages.map(\.id) == Array(written[0..<10]).map(\.id), "a page of ten: \(first.messages.map(\.text))")
        expect(limited.map(\.id) == Array(written[10..<15]).map(\.id), "pending after a page's end, with a limit")
    }

    private func equalTimestamps(_ s: Subject, _ expect: Expect) async throws {
        // The seed tailed "last timestamp + 0.001" and lost these.
        for i in 0..<5 { _ = try await customer(s, "c", "same time \(i)", at: Self.t0) }
        let first = try await s.store.pending(bot: Self.bot.id, after: .start, limit: 2)
        let rest = try await s.pending(after: first.end, limit: 10)
        expect(first.messages.count + rest.count == 5,
               "all five messages with the same timestamp arrive (\(first.messages.count) + \(rest.count))")
    }

    private func redelivery(_ s: Subject, _ expect: Expect) async throws {
        let m = try await customer(s, "c", "hello")
        expect(try await s.pending().map(\.id) == [m.id], "pending before commit")
        expect(try await s.pending().map(\.id) == [m.id], "pending again: not consumed by reading")
        _ = try await commit(s.store, m, reply: "hi")
        expect(try await s.pending().isEmpty, "done messages are not pending")
        expect(try await s.store.pending(bot: "other-bot", after: .start, limit: 10).messages.map(\.id) == [m.id], "done is per bot")
    }

    private func duplicateCommit(_ s: Subject, _ expect: Expect) async throws {
        let m = try await customer(s, "c", "hello")
        let (c, first) = try await commit(s.store, m, reply: "hi")
        let before = try await s.transcript("c")
        let second = try await s.store.commit(c)
        let after = try await s.transcript("c")
        expect(first == .committed && second == .duplicate, "the same commit twice: committed, then duplicate (got \(first), \(second))")
        expect(before == after && after.count == 2, "a duplicate commit writes nothing (\(after.count) messages)")
        expect(try await s.store.state(bot: Self.bot.id, conversation: "c")?.version == 1, "state written once")
    }

    /// A batch decided a conversation's two messages, the second from the state the first left;
    /// another writer did the first meanwhile, with another decision. The first is a duplicate,
    /// and the second is not written though the stored version is the one it expects
    /// (`BatchLinks`): it was decided from a state the store does not hold.
    private func batchAfterDuplicate(_ s: Subject, _ expect: Expect) async throws {
        let m1 = try await customer(s, "c", "one"), m2 = try await customer(s, "c", "two")
        var theirs = Self.sampleCommit(m1, after: nil, reply: "theirs")
        theirs.state.tags = ["theirs"]
        expect(try await s.store.commit(theirs) == .committed, "another writer commits the first message")
        let mine = Self.sampleCommit(m1, after: nil, reply: "mine")
        let next = Self.sampleCommit(m2, after: mine.state, reply: "mine too")
        let results = try await s.store.commit(batch: [mine, next])
        expect(results == [.duplicate, .conflict], "the first done, the second decided from its state not written (got \(results))")
        let stored = try await s.store.state(bot: Self.bot.id, conversation: "c")
        expect(stored?.tags == ["theirs"] && stored?.version == 1, "the state is the other writer's (\(String(describing: stored)))")
        let again = Self.sampleCommit(m2, after: stored, reply: "after theirs")
        expect(try await s.store.commit(batch: [again]) == [.committed], "decided again from the stored state, it commits")
        let replies = try await s.transcript("c").filter { $0.from == .bot }.map(\.text)
        expect(replies == ["theirs", "after theirs"], "replies: \(replies)")
    }

    private func compareAndSet(_ s: Subject, _ expect: Expect) async throws {
        let m1 = try await customer(s, "c", "one")
        _ = try await commit(s.store, m1, reply: "1")
        let m2 = try await customer(s, "c", "two")
        let (_, stale) = try await commit(s.store, m2, reply: "2", expected: 0)
        expect(stale == .conflict, "a commit with a stale version conflicts (got \(stale))")
        expect(try await s.transcript("c").count == 3, "a conflicting commit writes nothing")
        let (_, fresh) = try await commit(s.store, m2, reply: "2")
        expect(fresh == .committed, "the retry with the current version commits (got \(fresh))")
    }

    private func perConversationOrder(_ s: Subject, _ expect: Expect) async throws {
        let m1 = try await customer(s, "c", "one")
        let m2 = try await customer(s, "c", "two")
        let other = try await customer(s, "d", "other")
        let (_, early) = try await commit(s.store, m2, reply: "2")
        expect(early == .outOfOrder, "the second message cannot commit before the first (got \(early))")
        let (_, d) = try await commit(s.store, other, reply: "x")
        expect(d == .committed, "other conversations are not held up (got \(d))")
        _ = try await commit(s.store, m1, reply: "1")
        let (_, late) = try await commit(s.store, m2, reply: "2")
        expect(late == .committed, "in order it commits (got \(late))")
        let replies = try await s.transcript("c").filter { $0.from == .bot }.map(\.text)
        expect(replies == ["1", "2"], "replies in order: \(replies)")
    }

    private func racingCommits(_ s: Subject, _ expect: Expect) async throws {
        let m = try await customer(s, "c", "hello")
        let decision = Decision(outcome: .fired(["r"]), effects: [.reply(text: "hi", rule: "r")],
                                state: { var s = ConversationState(conversationID: "c"); s.version = 1; return s }(),
                                ruleSetVersion: "v1", trace: nil, events: [])
        let c = Commit(bot: Self.bot, inbound: m, expectedVersion: 0, decision: decision, at: m.at)
        let results = try await withThrowingTaskGroup(of: CommitResult.self) { group in
            for _ in 0..<8 { group.addTask { try await s.store.commit(c) } }
            var all: [CommitResult] = []
            for try await r in group { all.append(r) }
            return all
        }
        expect(results.filter { $0 == .committed }.count == 1, "exactly one of 8 racing commits wins: \(results)")
        let replies = try await s.transcript("c").filter { $0.from == .bot }
        expect(replies.count == 1, "one reply, not \(replies.count)")
    }

    private func crashBetweenSteps(_ s: Subject, _ expect: Expect) async throws {
        // Read, decide, crash before commit: the message is still pending, nothing was written.
        let m = try await customer(s, "c", "hello")
        _ = try await s.pending()
        _ = try await s.store.state(bot: Self.bot.id, conversation: "c")
        expect(try await s.pending().map(\.id) == [m.id], "still pending after a crash before commit")
        // Commit, crash before moving the position: not pending again, the position catches up later.
        _ = try await commit(s.store, m, reply: "hi")
        expect(try await s.pending(after: try await s.store.position(bot: Self.bot.id)).isEmpty,
               "committed messages are not redelivered even with a stale position")
        // Deciding again after a crash that did commit: a duplicate, no second reply.
        let (_, again) = try await commit(s.store, m, reply: "hi", expected: 0)
        expect(again == .duplicate, "re-deciding a committed message is a duplicate (got \(again))")
        expect(try await s.transcript("c").filter { $0.from == .bot }.count == 1, "one reply")
    }

    /// A position moved past done messages: a read from it starts after them; it never moves back.
    private func position(_ s: Subject, _ expect: Expect) async throws {
        let bot = Self.bot.id
        let a = try await customer(s, "a", "1")
        let b = try await customer(s, "b", "2")
        expect(try await s.store.position(bot: bot) == .start, "a new bot's position is the start")
        let page = try await s.store.pending(bot: bot, after: .start, limit: 2)
        expect(page.messages.map(\.id) == [a.id, b.id], "the first page: \(page.messages.map(\.text))")
        _ = try await customer(s, "a", "3", at: Self.t0.addingTimeInterval(1))
        _ = try await commit(s.store, a, reply: "x")
        _ = try await commit(s.store, b, reply: "y")
        try await s.store.move(bot: bot, to: page.end)
        let moved = try await s.store.position(bot: bot)
        expect(try await s.pending(after: moved).map(\.text) == ["3"], "from the moved position only the undone message is pending")
        try await s.store.move(bot: bot, to: .start)
        expect(try await s.pending(after: try await s.store.position(bot: bot)).map(\.text) == ["3"], "the position does not move back")
        let last = try await s.store.pending(bot: bot, after: moved, limit: 10)
        let after = try await s.store.pending(bot: bot, after: last.end, limit: 10)
        expect(after.messages.isEmpty, "a read from the last page's end finds nothing: \(after.messages.map(\.text))")
    }

    /// Sequence numbers increase strictly in read order, and a read after a `seq` goes on there.
    private func sequenceNumbers(_ s: Subject, _ store: any SequencedStore, _ expect: Expect) async throws {
        var written: [StoredMessage] = []
        for i in 0..<12 { written.append(try await customer(s, "c\(i % 3)", "m\(i)", at: Self.t0.addingTimeInterval(Double(i)))) }
        let pending: [StoredMessage] = try await store.pending(bot: Self.bot.id, after: 0, limit: 100)
        expect(zip(pending, pending.dropFirst()).allSatisfy { $0.seq < $1.seq }, "sequence numbers increase strictly")
        let limited: [StoredMessage] = try await store.pending(bot: Self.bot.id, after: pending[5].seq, limit: 3)
        expect(limited.map(\.id) == Array(written[6..<9]).map(\.id), "pending after a sequence number, with a limit")
        expect(try await store.position(bot: Self.bot.id).seq == 0, "a sequenced store's start is seq 0")
    }

    private func cursor(_ s: Subject, _ store: any SequencedStore, _ expect: Expect) async throws {
        let a = try await customer(s, "a", "1")
        let b = try await customer(s, "b", "2")
        _ = try await customer(s, "a", "3")
        expect(try await store.cursor(bot: Self.bot.id) == 0, "a new bot's cursor is 0")
        _ = try await commit(s.store, b, reply: "x")
        try await store.advanceCursor(bot: Self.bot.id)
        expect(try await store.cursor(bot: Self.bot.id) == a.seq - 1, "the cursor stops below the oldest message not done")
        _ = try await commit(s.store, a, reply: "y")
        try await store.advanceCursor(bot: Self.bot.id)
        let c = try await store.cursor(bot: Self.bot.id)
        let pending: [StoredMessage] = try await store.pending(bot: Self.bot.id, after: c, limit: 10)
        expect(pending.map(\.text) == ["3"], "after advancing, only the undone message is pending: \(pending.map(\.text))")
    }

    private func claimPending(_ s: Subject, _ store: any SharedStore, _ expect: Expect) async throws {
        let until = Date().addingTimeInterval(30)
        let bot = Self.bot.id
        let x1 = try await customer(s, "x", "1")
        let y1 = try await customer(s, "y", "2")
        let x2 = try await customer(s, "x", "3")
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
        _ = try await commit(s.store, x1, reply: "ok")
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
    private func shares(_ s: Subject, _ store: any SharedStore, _ expect: Expect) async throws {
        let until = Date().addingTimeInterval(30)
        let bot = Self.bot.id
        var all: [String] = []
        for i in 0..<12 { all.append(try await customer(s, "s\(i)", "\(i)").id) }
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

    private func leases(_ store: any SharedStore, _ expect: Expect) async throws {
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

    private func inbox(_ s: Subject, _ store: any BackendStore, _ expect: Expect) async throws {
        let first = try await customer(s, "late", "help", at: Self.t0)
        _ = try await commit(s.store, first, handoff: true)
        try await Task.sleep(for: .milliseconds(20))
        let second = try await customer(s, "later", "help", at: Self.t0)
        _ = try await commit(s.store, second, handoff: true)
        let third = try await customer(s, "served", "hi")
        _ = try await commit(s.store, third, reply: "hello")
        let inbox = try await store.inbox(bot: Self.bot.id)
        expect(inbox.map(\.conversationID) == ["late", "later"], "waiting conversations, oldest first: \(inbox.map(\.conversationID))")
        expect(inbox.first?.queue == "general" && inbox.first?.reason == "threshold", "queue and reason recorded")
        expect(inbox.first?.lastMessage == "help", "the last customer message is shown")
        let agent = try await s.backend.append(NewMessage(conversationID: "late", from: .agent, senderID: "agent:li", text: "I'm here"))
        _ = try await commit(s.store, agent)
        expect(try await store.inbox(bot: Self.bot.id).map(\.conversationID) == ["later"], "once an agent writes, it leaves the inbox")
    }

    private func notifications(_ s: Subject, _ store: any NotificationStore, _ expect: Expect) async throws {
        expect(try await store.lastNotificationSeq() == 0, "no notification yet: the last seq is 0")
        for i in 0..<3 {
            let m = try await customer(s, "n\(i)", "help")
            _ = try await commit(s.store, m, handoff: true)
        }
        let all = try await store.notifications(after: 0, limit: 10)
        expect(all.map(\.notification.conversationID) == ["n0", "n1", "n2"], "notifications in order: \(all.map(\.notification.conversationID))")
        expect(zip(all, all.dropFirst()).allSatisfy { $0.seq < $1.seq }, "notification sequence numbers increase")
        expect(try await store.notifications(after: all[0].seq, limit: 10).count == 2, "notifications after a sequence number")
        expect(all.first?.notification.lastMessage == "help" && all.first?.notification.isHandoff == true, "notification fields")
        let last = try await store.lastNotificationSeq()
        expect(last == all.last?.seq, "the last notification's seq: \(last)")
    }

    private func closeEvents(_ s: Subject, _ expect: Expect) async throws {
        let m = try await customer(s, "c", "hi")
        _ = try await commit(s.store, m, reply: "hello")
        _ = try await s.backend.append(NewMessage(conversationID: "c", kind: .close, from: .system, text: ""))
        let pending = try await s.pending()
        expect(pending.map(\.kind) == [.close], "a close event is inbound: \(pending.map(\.kind))")
    }

    private func replies(_ s: Subject, _ expect: Expect) async throws {
        let m = try await customer(s, "c", "hello")
        _ = try await commit(s.store, m, reply: "hi", handoff: true)
        let t = try await s.transcript("c")
        expect(t.map(\.from) == [.customer, .bot, .system], "customer, reply, system notice: \(t.map(\.from))")
        expect(t.dropFirst().allSatisfy { $0.senderID == "bot:conf" }, "bot messages carry the bot's sender id")
        expect(t[1].ruleID == "r", "the reply names its rule")
        expect(try await s.pending().isEmpty, "the bot's own messages are never inbound")
    }

    /// A reply's buttons and links come back with it from the transcript, in order, text as
    /// written (quotes, non-ASCII, a URL's query); a notice has none.
    private func quickReplies(_ s: Subject, _ expect: Expect) async throws {
        let m = try await customer(s, "c", "hello")
        let offered = [QuickReply(title: "Track my order"), QuickReply(title: "Devoluciones \"ya\" ✓"),
                       QuickReply(title: "Returns", url: "https://shop.example/returns?from=chat&order=A%2F1#top")]
        let old = try await s.store.state(bot: Self.bot.id, conversation: "c")
        let result = try await s.store.commit(Self.sampleCommit(m, after: old, reply: "hi", handoff: true, quickReplies: offered))
        expect(result == .committed, "committed (got \(result))")
        let t = try await s.transcript("c")
        expect(t.map(\.from) == [.customer, .bot, .system], "customer, reply, system notice: \(t.map(\.from))")
        guard t.count == 3 else { return }
        expect(t[1].quickReplies == offered, "the reply's quick replies as committed: \(t[1].quickReplies)")
        expect(t[0].quickReplies.isEmpty && t[2].quickReplies.isEmpty, "only the reply has quick replies")
    }

    private func agentOvertakes(_ s: Subject, _ expect: Expect) async throws {
        let m = try await customer(s, "c", "hello")
        _ = try await s.backend.append(NewMessage(conversationID: "c", from: .agent, senderID: "agent:li", text: "Li here"))
        let (_, result) = try await commit(s.store, m, reply: "hi")
        expect(result == .silenced, "the customer message is done, its reply not written: silenced (got \(result))")
        let t = try await s.transcript("c")
        expect(t.map(\.from) == [.customer, .agent], "no reply lands after the agent's message: \(t.map(\.from))")
        expect(try await s.pending().map(\.from) == [.agent], "the agent message is still to be decided")
    }

    private func idempotentAppend(_ s: Subject, _ expect: Expect) async throws {
        let a = try await customer(s, "c", "hello", id: "same-id")
        let b = try await customer(s, "c", "hello", id: "same-id")
        expect(a.seq == b.seq, "appending the same message id twice keeps one message")
        expect(try await s.transcript("c").count == 1, "one row")
    }
}
