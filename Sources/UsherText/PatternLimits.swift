/// Bounds on the work one match may do; a match that reaches one counts as no match.
public struct PatternLimits: Sendable, Equatable {
    /// PCRE2's match limit: roughly, backtracking steps for one match attempt.
    public var matchLimit: UInt32
    /// PCRE2's depth limit: nested backtracking points (interpreter only; JIT ignores it).
    public var depthLimit: UInt32
    /// The heap the interpreter may use for backtracking, in KiB.
    public var heapLimitKiB: UInt32

    public init(matchLimit: UInt32, depthLimit: UInt32, heapLimitKiB: UInt32) {
        self.matchLimit = matchLimit
        self.depthLimit = depthLimit
        self.heapLimitKiB = heapLimitKiB
    }

    /// Limits that legitimate patterns do not reach on a 16 KiB message, while a catastrophic
    /// one such as `(a+)+$` gives up within milliseconds.
    public static let `default` = PatternLimits(matchLimit: 1_000_000, depthLimit: 100_000, heapLimitKiB: 20_480)
}
