/// An inclusive range of counts as written in a rule: `N`, `{at_least}`, `{at_most}`,
/// `{between: [a, b]}`.
public struct CountRange: Sendable, Hashable, CustomStringConvertible {
    public var lower: Int
    /// `nil` means unbounded.
    public var upper: Int?

    public init(lower: Int = 0, upper: Int? = nil) {
        self.lower = lower
        self.upper = upper
    }

    public func contains(_ n: Int) -> Bool {
        n >= lower && (upper.map { n <= $0 } ?? true)
    }

    /// Whether every count in `self` is also in `other`.
    public func isSubset(of other: CountRange) -> Bool {
        guard lower >= other.lower else { return false }
        guard let ou = other.upper else { return true }
        guard let u = upper else { return false }
        return u <= ou
    }

    public func intersection(_ other: CountRange) -> CountRange {
        let u: Int? = switch (upper, other.upper) {
        case let (a?, b?): min(a, b)
        case let (a?, nil): a
        case let (nil, b?): b
        default: nil
        }
        return CountRange(lower: max(lower, other.lower), upper: u)
    }

    public var isEmpty: Bool { upper.map { $0 < lower } ?? false }

    public var description: String {
        switch (lower, upper) {
        case let (l, u?) where l == u: return "exactly \(l)"
        case let (0, u?): return "at most \(u)"
        case let (l, nil): return "at least \(l)"
        case let (l, u?): return "between \(l) and \(u)"
        }
    }
}
