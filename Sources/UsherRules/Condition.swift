public import Foundation

/// A compiled `when` / `unless` condition. Keywords and patterns are referenced by their index in
/// the rule set's shared keyword index and pattern table, so one scan of a message serves every
/// rule.
public indirect enum Condition: Sendable {
    /// `keywords`: ids into `RuleSet.keywords`.
    case keywords(any: [Int], all: [Int], none: [Int])
    /// `regex`: any of these patterns (ids into `RuleSet.patterns`).
    case regex([Int])
    case customerMessages(CountRange)
    case botReplies(CountRange)
    case fallbacksInARow(CountRange)
    /// Time since the previous message of the conversation, within these bounds (seconds).
    case idleFor(TimeRange)
    /// Time since the session started, within these bounds (seconds).
    case sessionAge(TimeRange)
    /// Inside (`true`) or outside (`false`) the schedule with this index in `BotConfig.schedules`.
    case schedule(Int, inside: Bool)
    case tags(any: [String], all: [String], none: [String])
    case channel(Glob)
    case locale(Glob)
    case all([Condition])
    case any([Condition])
    case not(Condition)

    /// A rough cost of evaluating the condition, to check cheap conditions first.
    public var cost: Int {
        switch self {
        case .customerMessages, .botReplies, .fallbacksInARow, .idleFor, .sessionAge, .tags, .channel, .locale: 0
        case .keywords: 1
        case .regex: 2
        case .schedule: 3
        case let .all(parts), let .any(parts): parts.map(\.cost).max() ?? 0
        case let .not(inner): inner.cost
        }
    }

    /// Whether the condition depends only on the customer message count — a "threshold" rule.
    public var customerMessageRange: CountRange? {
        switch self {
        case let .customerMessages(r): return r
        case let .all(parts):
            var range = CountRange()
            for p in parts {
                guard let r = p.customerMessageRange else { return nil }
                range = range.intersection(r)
            }
            return range
        default: return nil
        }
    }

    /// The customer-message range that any match must fall in (conservative: the full range when
    /// unknown).
    public var impliedCustomerMessageRange: CountRange {
        switch self {
        case let .customerMessages(r): return r
        case let .all(parts):
            return parts.reduce(CountRange()) { $0.intersection($1.impliedCustomerMessageRange) }
        default: return CountRange()
        }
    }
}

/// Bounds on a span of time, in seconds.
public struct TimeRange: Sendable, Hashable {
    public var atLeast: TimeInterval
    public var atMost: TimeInterval?
    public init(atLeast: TimeInterval = 0, atMost: TimeInterval? = nil) {
        self.atLeast = atLeast
        self.atMost = atMost
    }
    public func contains(_ t: TimeInterval) -> Bool { t >= atLeast && (atMost.map { t <= $0 } ?? true) }
}

/// A shell-style glob (`*`, `?`) over a conversation field, matched case-insensitively.
public struct Glob: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    private let scalars: [Unicode.Scalar]

    public init(_ pattern: String) {
        self.pattern = pattern
        scalars = Array(pattern.lowercased().unicodeScalars)
    }

    public func matches(_ value: String?) -> Bool {
        guard let value else { return false }
        let v = Array(value.lowercased().unicodeScalars)
        var p = 0, s = 0, star = -1, mark = 0
        while s < v.count {
            if p < scalars.count, scalars[p] == "?" || scalars[p] == v[s] {
                p += 1; s += 1
            } else if p < scalars.count, scalars[p] == "*" {
                star = p; mark = s; p += 1
            } else if star >= 0 {
                p = star + 1; mark += 1; s = mark
            } else {
                return false
            }
        }
        while p < scalars.count, scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }

    public var description: String { pattern }
}
