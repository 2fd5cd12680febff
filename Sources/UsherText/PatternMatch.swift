/// The outcome of running a `Pattern` over one text.
public enum PatternMatch: Sendable, Equatable {
    /// The pattern does not occur.
    case noMatch
    /// The pattern occurs; `captures` holds the named groups that took part in the first match.
    case match(captures: [String: String])
    /// The match gave up: "match limit", "depth limit", "heap limit" or "time limit" (or, for
    /// anything else that should never happen, PCRE2's error text). Counts as no match, and
    /// should be reported.
    case limitHit(String)
    /// The time the caller gave (`Pattern.match(_:deadline:clock:)`) ran out first: the match was
    /// stopped, or never started. Counts as no match.
    case outOfTime
}
