/// Bounds on the work one match may do; a match that reaches one counts as no match.
public struct PatternLimits: Sendable, Equatable {
    /// PCRE2's match limit: roughly, backtracking steps for one match attempt.
    public var matchLimit: UInt32
    /// PCRE2's depth limit: nested backtracking points (interpreter only; JIT ignores it).
    public var depthLimit: UInt32
    /// The heap the interpreter may use for backtracking, in KiB.
    public var heapLimitKiB: UInt32
    /// Wall-clock time one match may take, checked at every start position. PCRE2's own limits
    /// count per start position, so this is what bounds a long message.
    public var timeLimit: Duration

    public init(matchLimit: UInt32, depthLimit: UInt32, heapLimitKiB: UInt32, timeLimit: Duration = .milliseconds(50)) {
        self.matchLimit = matchLimit
        self.depthLimit = depthLimit
        self.heapLimitKiB = heapLimitKiB
        self.timeLimit = timeLimit
    }

    /// Limits that legitimate patterns do not reach on a 16 KiB message, while a catastrophic
    /// one such as `(a+)+$` gives up within milliseconds, and no match runs much past 50 ms.
    public static let `default` = PatternLimits(
        matchLimit: 1_000_000, depthLimit: 100_000, heapLimitKiB: 20_480, timeLimit: .milliseconds(50))
}
