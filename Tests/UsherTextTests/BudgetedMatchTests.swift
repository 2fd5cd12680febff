import Testing
import UsherTestSupport
@testable import UsherText

/// `Pattern.match(_:deadline:clock:)`, the engine's: the same answers as an unbudgeted match
/// while time lasts, `.outOfTime` once it does not, even inside one slow start position.
@Suite struct BudgetedMatchTests {
    /// Catastrophic at the first start position: (a+)+ tries every way to split 16,000 a's.
    static let catastrophic = String(repeating: "a", count: 16_000) + "!"

    @Test func aFrozenClockGivesTheUnbudgetedAnswers() throws {
        let padding = String(repeating: "x ", count: 400)
        // (a+)+b takes about 2^18 steps at the first a of the run, over the first slice: the
        // match goes on from that position with larger slices, and finds the b later.
        let slow = padding + String(repeating: "a", count: 18) + "c " + padding + "aab"
        let cases: [(String, String)] = [
            (#"(?<order>\d{3}-\d{7})"#, padding + "order 123-1234567"),
            (#"(?<run>(a+)+b)"#, slow),
            (#"(?<run>(a+)+b)"#, String(repeating: "a", count: 18) + "c aab"),
            (#"(a+)+$"#, Self.catastrophic),
            (#"(a+)+$"#, String(repeating: "a", count: 40) + "!"),
            (#"\Gx+(a+)+b"#, "xx" + String(repeating: "a", count: 18) + "c"),
            (#"(*NO_JIT)refund|(?<n>\d+)$"#, padding + "42"),
            (#"refund"#, padding),
            (#"(a|aa){1,8}$"#, String(repeating: "a", count: 200) + "!"),
        ]
        // No time limit of the pattern's own: both answers depend on the steps alone.
        let untimed = PatternLimits(matchLimit: 1_000_000, depthLimit: 100_000, heapLimitKiB: 20_480, timeLimit: .seconds(3600))
        for (source, text) in cases {
            let pattern = try Pattern(source, limits: untimed)
            let frozen = ManualClock()
            let budgeted = pattern.match(text, deadline: .milliseconds(10), clock: frozen.clock)
            #expect(budgeted == pattern.match(text), "\(source)")
        }
        #expect(try Pattern(#"(?<run>(a+)+b)"#).match(slow) == .match(captures: ["run": "aab"]))
    }

    @Test func aSpentBudgetRunsNothing() throws {
        let clock = ManualClock()
        clock.advance(by: .milliseconds(10))
        #expect(try Pattern("x").match("x", deadline: .milliseconds(10), clock: clock.clock) == .outOfTime)
        #expect(clock.reads == 1)
    }

    /// The budget runs out inside one start position's work: the slices stop growing once the
    /// time they take says the next would not fit.
    @Test func theBudgetStopsAMatchInsideOneStartPosition() throws {
        let clock = ManualClock(step: .milliseconds(1))
        let pattern = try Pattern(#"(a+)+$"#)
        #expect(pattern.match(Self.catastrophic, deadline: .milliseconds(5), clock: clock.clock) == .outOfTime)
        #expect(clock.reads < 10, "\(clock.reads) reads")
        // Short messages run the plain code first, then the code that can stop.
        let short = ManualClock(step: .milliseconds(1))
        #expect(pattern.match(String(repeating: "a", count: 60) + "!", deadline: .milliseconds(5), clock: short.clock) == .outOfTime)
    }

    /// Many cheap start positions: the callout reads the clock and stops the match.
    @Test func theBudgetStopsAMatchAcrossStartPositions() throws {
        let clock = ManualClock(step: .milliseconds(1))
        // Just under the first slice at every start position, so no slice ever runs out.
        let pattern = try Pattern("(a|aa){1,10}$")
        let text = String(repeating: "a", count: 16_000) + "!"
        #expect(pattern.match(text, deadline: .milliseconds(20), clock: clock.clock) == .outOfTime)
        #expect(clock.reads <= 22, "read at every eighth start position until the deadline: \(clock.reads)")
    }

    @Test func thePatternsOwnTimeLimitStillApplies() throws {
        let limits = PatternLimits(matchLimit: 1_000_000, depthLimit: 100_000, heapLimitKiB: 20_480, timeLimit: .milliseconds(3))
        let pattern = try Pattern("(a|aa){1,10}$", limits: limits)
        let clock = ManualClock(step: .milliseconds(1))
        let text = String(repeating: "a", count: 16_000) + "!"
        #expect(pattern.match(text, deadline: .seconds(1), clock: clock.clock) == .limitHit("time limit"))
    }

    /// On the machine's clock, a catastrophic pattern given 10 ms spends about that much CPU
    /// (the bound is loose: it is the order of magnitude that matters, not the machine's speed).
    @Test func onTheSystemClockTheBudgetBoundsTheWork() throws {
        let pattern = try Pattern(#"(a+)+(?:z1)?$"#)
        let clock = MonotonicClock.system
        var result = PatternMatch.noMatch
        let spent = cpuTime { result = pattern.match(Self.catastrophic, deadline: clock.now() + .milliseconds(10), clock: clock) }
        #expect(result == .outOfTime || result == .limitHit("match limit"))
        #expect(spent < .milliseconds(100), "\(spent)")
    }
}
