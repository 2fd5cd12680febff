/// A monotonic clock, read as the time since a fixed start. Budgeted matches
/// (`Pattern.match(_:deadline:clock:)`) and the decision engine take it as a dependency, so a
/// test can drive time by hand instead of racing the machine.
public struct MonotonicClock: Sendable {
    /// The time now, since the clock's start.
    public let now: @Sendable () -> Duration

    public init(_ now: @escaping @Sendable () -> Duration) { self.now = now }

    /// The machine's monotonic clock (`ContinuousClock`), counted from its first use.
    public static let system: MonotonicClock = {
        let start = ContinuousClock.now
        return MonotonicClock { ContinuousClock.now - start }
    }()

    /// A clock that never moves: a decision on it never runs out of its time budget, so what
    /// it decides does not depend on how busy the machine is (rule tests, replay).
    public static let stopped = MonotonicClock { .zero }
}
