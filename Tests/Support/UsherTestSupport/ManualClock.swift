public import UsherText
import Synchronization

/// A `MonotonicClock` the test drives: it moves only by `advance(by:)` and by `step` at every
/// read, so what runs out of time does so at the same read every run, however loaded the machine.
public final class ManualClock: Sendable {
    private let state: Mutex<(now: Duration, reads: Int)>
    /// How far each read moves the clock (zero: frozen).
    public let step: Duration

    public init(step: Duration = .zero) {
        self.step = step
        state = Mutex((.zero, 0))
    }

    /// The clock to inject.
    public var clock: MonotonicClock {
        MonotonicClock {
            self.state.withLock { s in
                let now = s.now
                s.now += self.step
                s.reads += 1
                return now
            }
        }
    }

    public func advance(by d: Duration) { state.withLock { $0.now += d } }

    /// How many times the clock was read.
    public var reads: Int { state.withLock { $0.reads } }
}
