public import UsherDiagnostics
public import Foundation

/// One validated rule, ready for the engine. Immutable; a class so the engine reads rules
/// without copying them.
public final class Rule: Sendable {
    public let id: String
    public let description: String?
    public let priority: Int
    /// `continue: true` lets later rules fire too.
    public let continues: Bool
    /// At most once per session.
    public let once: Bool
    /// Not again within this many seconds.
    public let cooldown: TimeInterval?
    public let enabled: Bool
    /// May speak while the conversation waits for an agent.
    public let whileWaiting: Bool
    /// `nil`: always holds.
    public let when: Condition?
    public let unless: Condition?
    public let actions: [Action]
    /// Named captures the rule's `when` regexes can set.
    public let captureNames: Set<String>
    /// Where the rule's `id` is written.
    public let location: SourceLocation
    /// Position in bot.yaml order, then file order — the tie-breaker for equal priorities.
    public let declarationOrder: Int

    public init(id: String, description: String? = nil, priority: Int = 0, continues: Bool = false,
                once: Bool = false, cooldown: TimeInterval? = nil, enabled: Bool = true,
                whileWaiting: Bool = false, when: Condition? = nil, unless: Condition? = nil,
                actions: [Action], captureNames: Set<String> = [], location: SourceLocation,
                declarationOrder: Int) {
        self.id = id
        self.description = description
        self.priority = priority
        self.continues = continues
        self.once = once
        self.cooldown = cooldown
        self.enabled = enabled
        self.whileWaiting = whileWaiting
        self.when = when
        self.unless = unless
        self.actions = actions
        self.captureNames = captureNames
        self.location = location
        self.declarationOrder = declarationOrder
    }

    /// No `once`, no `cooldown`, enabled, and stops evaluation when it fires.
    var isUnguarded: Bool { enabled && !once && cooldown == nil && !continues }
}
