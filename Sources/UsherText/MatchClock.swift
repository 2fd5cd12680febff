internal import CPCRE2
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The deadline of the match running on this thread, read by the callout PCRE2 makes at each
/// start position (see `Pattern`). One per thread, found through a pthread key, so the shared
/// match context needs no per-call copy; a thread runs one match at a time, and PCRE2 calls the
/// callout on the thread that called `pcre2_match`.
struct MatchClock {
    /// How often, in callouts, the clock is read. Reading it costs more than trying a cheap start
    /// position, most matches try only a few positions, and each position is bounded by the match
    /// limit anyway: so the clock starts at the eighth position and is read every eighth.
    static let readEvery = 8

    private var timeLimit: Duration?
    private var startedAt: ContinuousClock.Instant?
    private var callouts = 0
    private(set) var expired = false

    /// Resets for a new match; nil means no time limit.
    mutating func start(timeLimit: Duration?) {
        self.timeLimit = timeLimit
        startedAt = nil
        callouts = 0
        expired = false
    }

    /// Called at each start position: false once the time is up.
    mutating func mayContinue() -> Bool {
        callouts += 1
        guard let timeLimit, callouts % Self.readEvery == 0 else { return true }
        let now = ContinuousClock.now
        guard let startedAt else {
            startedAt = now
            return true
        }
        if now - startedAt < timeLimit { return true }
        expired = true
        return false
    }

    /// This thread's clock, created on first use and freed when the thread ends.
    static var current: UnsafeMutablePointer<MatchClock> {
        if let existing = pthread_getspecific(key) {
            return existing.assumingMemoryBound(to: MatchClock.self)
        }
        let clock = UnsafeMutablePointer<MatchClock>.allocate(capacity: 1)
        clock.initialize(to: MatchClock())
        pthread_setspecific(key, clock)
        return clock
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { clock in
            guard let clock else { return }
            let typed = clock.assumingMemoryBound(to: MatchClock.self)
            typed.deinitialize(count: 1)
            typed.deallocate()
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// The callout every pattern gets at its start (and PCRE2 also calls for the pattern's own
    /// callouts): 0 lets the match go on, a negative value ends it with that error.
    static let callout: @convention(c) (UnsafeMutablePointer<pcre2_callout_block_8>?, UnsafeMutableRawPointer?) -> Int32 = { _, _ in
        current.pointee.mayContinue() ? 0 : PCRE2_ERROR_CALLOUT
    }
}
