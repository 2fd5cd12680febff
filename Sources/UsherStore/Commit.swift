public import Foundation
public import UsherEngine

/// Everything one inbound message changes, written atomically by `ChatStore.commit`.
public struct Commit: Sendable, Hashable {
    public var bot: String
    /// The message (or close event) that is now done for `bot`.
    public var inbound: StoredMessage
    /// The state's version as read before deciding (0 when there was none): compare-and-set.
    public var expectedVersion: Int
    /// The owner as read before deciding (nil: no state, or not said). A store that writes
    /// before it checks (PostgreSQL, in one round trip) needs it to know whether a handoff
    /// opens or ends; without it, that store checks first.
    public var expectedOwner: Owner?
    /// The new state, including the owner (`bot` → `waiting` → `agent`).
    public var state: ConversationState
    /// Replies and system notices, in order, each with a deterministic idempotency key.
    public var outgoing: [OutgoingMessage]
    /// Agent notifications raised by handoffs and `notify` actions, in order.
    public var notifications: [AgentNotification]
    /// The rule-set version that decided.
    public var ruleSetVersion: String
    /// Tags the decision's `tag` and `untag` actions added and removed (a tag both added and
    /// removed counts as its last action said), for a store that hands them to a backend keeping
    /// tags of its own (Chatwoot's labels); `state.tags` holds the set they lead to.
    public var tagsAdded: [String]
    public var tagsRemoved: [String]

    public init(bot: String, inbound: StoredMessage, expectedVersion: Int, expectedOwner: Owner? = nil,
                state: ConversationState, outgoing: [OutgoingMessage] = [], notifications: [AgentNotification] = [],
                ruleSetVersion: String, tagsAdded: [String] = [], tagsRemoved: [String] = []) {
        self.bot = bot
        self.inbound = inbound
        self.expectedVersion = expectedVersion
        self.expectedOwner = expectedOwner
        self.state = state
        self.outgoing = outgoing
        self.notifications = notifications
        self.ruleSetVersion = ruleSetVersion
        self.tagsAdded = tagsAdded
        self.tagsRemoved = tagsRemoved
    }
}

/// What a commit did.
public enum CommitResult: String, Sendable, Hashable {
    /// Written.
    case committed
    /// Written — the state, the done mark, the notifications — without its replies and notices:
    /// an agent's message newer than the inbound one is in the conversation, and the bot never
    /// speaks over a human. What it decided to say was not said (not counted as replies).
    case silenced
    /// The inbound message was already done for this bot: nothing changed (at-least-once intake,
    /// exactly-once effects).
    case duplicate
    /// The state changed since it was read: nothing changed; read it again and decide again.
    case conflict
    /// An earlier inbound message of the same conversation is not done yet: nothing changed;
    /// do that one first.
    case outOfOrder

    /// Whether the commit was written (`committed` or `silenced`).
    public var isWritten: Bool { self == .committed || self == .silenced }
}

/// The links between a batch's commits (`ChatStore.commit(batch:)`): a commit that expects the
/// version the commit before it in its conversation (and bot) decided was decided from that
/// one's state. When that one is not written — done already, perhaps by another writer with
/// another decision; in conflict; out of order — the state this one was decided from is not
/// the stored one, even where the stored version happens to be the one it expects: it is not
/// written either (`.conflict`; `.outOfOrder` after an out-of-order one), unless its own
/// message is done (`.duplicate`, which a store checks first when it can). The worker then
/// decides it again from the stored state — also after a batch it wrote before and writes
/// again (its outcome lost with a connection): a commit after one found done is decided again
/// rather than trusted, at the cost of one more round trip.
public struct BatchLinks<Key: Hashable & Sendable>: Sendable {
    /// By bot and conversation: the version its last commit so far decided, and what that commit
    /// came back as.
    private var last: [Key: (version: Int, result: CommitResult)] = [:]

    public init() {}

    /// What a commit comes back as without being checked further, because it was decided from
    /// the state of a commit before it that was not written; nil: check it. `expected`: its
    /// `expectedVersion`; `key` names its bot and conversation (a store that numbers the
    /// batch's conversations passes the number, and spares a string built and hashed for every
    /// commit).
    public func unwritten(expecting expected: Int, at key: Key) -> CommitResult? {
        guard let before = last[key], !before.result.isWritten, before.version == expected else { return nil }
        return before.result == .outOfOrder ? .outOfOrder : .conflict
    }

    /// Notes what a commit that decided `version` (its `state.version`) came back as.
    public mutating func record(decided version: Int, _ result: CommitResult, at key: Key) {
        last[key] = (version, result)
    }
}

extension BatchLinks where Key == String {
    private static func key(_ c: Commit) -> String { c.bot + "\u{0}" + c.inbound.conversationID }

    public func unwritten(_ c: Commit) -> CommitResult? { unwritten(expecting: c.expectedVersion, at: Self.key(c)) }

    public mutating func record(_ c: Commit, _ result: CommitResult) { record(decided: c.state.version, result, at: Self.key(c)) }

    /// `c`'s result in a batch written one commit at a time: `write` (its commit alone) unless a
    /// commit before it says it is not written; noted either way.
    public mutating func result(of c: Commit, _ write: () async throws -> CommitResult) async rethrows -> CommitResult {
        let result: CommitResult
        if let unwritten = unwritten(c) { result = unwritten } else { result = try await write() }
        record(c, result)
        return result
    }
}

/// A bot message or system notice to write.
public struct OutgoingMessage: Sendable, Hashable, Codable {
    /// `bot:inbound-id:index` — unique in the store; writing the same key twice keeps one row.
    public var idempotencyKey: String
    public var conversationID: String
    /// `.bot` for replies, `.system` for notices.
    public var from: SenderRole
    public var senderID: String
    public var senderName: String
    public var text: String
    public var ruleID: String
    public var at: Date
    /// The buttons and links of a reply's `quick_replies`, in order; empty for most messages.
    public var quickReplies: [QuickReply]

    public init(idempotencyKey: String, conversationID: String, from: SenderRole, senderID: String,
                senderName: String, text: String, ruleID: String, at: Date, quickReplies: [QuickReply] = []) {
        self.idempotencyKey = idempotencyKey
        self.conversationID = conversationID
        self.from = from
        self.senderID = senderID
        self.senderName = senderName
        self.text = text
        self.ruleID = ruleID
        self.at = at
        self.quickReplies = quickReplies
    }

    /// As synthesized, except that `quickReplies` may be missing (none): what was written
    /// before replies had them still reads.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(idempotencyKey: try c.decode(String.self, forKey: .idempotencyKey),
                  conversationID: try c.decode(String.self, forKey: .conversationID),
                  from: try c.decode(SenderRole.self, forKey: .from),
                  senderID: try c.decode(String.self, forKey: .senderID),
                  senderName: try c.decode(String.self, forKey: .senderName),
                  text: try c.decode(String.self, forKey: .text),
                  ruleID: try c.decode(String.self, forKey: .ruleID),
                  at: try c.decode(Date.self, forKey: .at),
                  quickReplies: try c.decodeIfPresent([QuickReply].self, forKey: .quickReplies) ?? [])
    }
}

/// A notification for agents (DESIGN.md §9): a handoff or a `notify` action.
public struct AgentNotification: Sendable, Hashable, Codable {
    public var idempotencyKey: String
    public var conversationID: String
    public var queue: String
    /// The handoff reason, or the rule id of a `notify` action.
    public var reason: String
    public var text: String
    public var customerName: String?
    /// The customer message that led to it.
    public var lastMessage: String
    public var isHandoff: Bool
    public var at: Date

    public init(idempotencyKey: String, conversationID: String, queue: String, reason: String, text: String,
                customerName: String?, lastMessage: String, isHandoff: Bool, at: Date) {
        self.idempotencyKey = idempotencyKey
        self.conversationID = conversationID
        self.queue = queue
        self.reason = reason
        self.text = text
        self.customerName = customerName
        self.lastMessage = lastMessage
        self.isHandoff = isHandoff
        self.at = at
    }
}

extension Commit {
    /// The commit for a decision: effects become outgoing messages and notifications with keys
    /// derived from the bot, the inbound message id and the effect's index — so deciding the same
    /// message again yields the same keys.
    public init(bot: BotIdentity, inbound: StoredMessage, expectedVersion: Int, expectedOwner: Owner? = nil, decision: Decision,
                at: Date) {
        var outgoing: [OutgoingMessage] = []
        var notifications: [AgentNotification] = []
        var added: [String] = [], removed: [String] = []
        for (index, effect) in decision.effects.enumerated() {
            let key = "\(bot.id):\(inbound.id):\(index)"
            switch effect {
            case let .reply(text, rule, quickReplies):
                outgoing.append(OutgoingMessage(idempotencyKey: key, conversationID: inbound.conversationID, from: .bot,
                                                senderID: bot.senderID, senderName: bot.name, text: text, ruleID: rule, at: at,
                                                quickReplies: quickReplies))
            case let .system(text, rule):
                outgoing.append(OutgoingMessage(idempotencyKey: key, conversationID: inbound.conversationID, from: .system,
                                                senderID: bot.senderID, senderName: bot.name, text: text, ruleID: rule, at: at))
            case let .notify(text, queue, reason, _):
                let isHandoff = decision.effects.contains { if case let .handoff(r, _, _, _) = $0 { r == reason } else { false } }
                notifications.append(AgentNotification(idempotencyKey: key, conversationID: inbound.conversationID,
                                                       queue: queue, reason: reason, text: text,
                                                       customerName: decision.state.customerName,
                                                       lastMessage: inbound.text, isHandoff: isHandoff, at: at))
            case let .tag(t):
                removed.removeAll { $0 == t }
                if !added.contains(t) { added.append(t) }
            case let .untag(t):
                added.removeAll { $0 == t }
                if !removed.contains(t) { removed.append(t) }
            case .handoff, .set:
                break   // carried by the new state (owner, metadata)
            }
        }
        self.init(bot: bot.id, inbound: inbound, expectedVersion: expectedVersion, expectedOwner: expectedOwner, state: decision.state,
                  outgoing: outgoing, notifications: notifications, ruleSetVersion: decision.ruleSetVersion,
                  tagsAdded: added, tagsRemoved: removed)
    }
}

/// Who the bot is, as far as the store cares.
public struct BotIdentity: Sendable, Hashable {
    public var id: String
    public var name: String
    public var senderID: String
    public init(id: String, name: String, senderID: String) {
        self.id = id
        self.name = name
        self.senderID = senderID
    }
}
