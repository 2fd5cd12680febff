internal import CPCRE2
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// What a match running on this thread needs besides the pattern: the match context whose limits
/// are set for each call, and the deadline read by the callout PCRE2 makes at each start position
/// (see `Pattern`). One per thread, found through a pthread key: a thread runs one match at a
/// time, and PCRE2 calls the callout on the thread that called `pcre2_match`.
struct MatchClock {
    /// How often, in callouts, the clock is read when a match starts. Reading it costs more than
    /// trying a cheap start position, and most matches try only a few: so the clock is read at
    /// every eighth position. A match that has already needed a second slice reads it at every
    /// position (`Pattern`).
    static let readEvery = 8

    /// This thread's match context: its match, depth and heap limits are set before each call,
    /// its callout is `MatchClock.callout`.
    let context: OpaquePointer
    private var clock: MonotonicClock?
    private var deadline: Duration = .zero
    private var every = readEvery
    private var callouts = 0
    private(set) var expired = false
    /// The start position of the last callout: where a match that hit its match limit was.
    private(set) var lastStart = 0

    private init(context: OpaquePointer) { self.context = context }

    /// Resets for a new call: no deadline when `clock` is nil; the clock read every `every`
    /// start positions.
    mutating func start(deadline: Duration, clock: MonotonicClock?, every: Int) {
        self.clock = clock
        self.deadline = deadline
        self.every = every
        callouts = 0
        expired = false
        lastStart = 0
    }

    /// Called at each start position: false once the deadline has passed.
    mutating func mayContinue(at position: Int) -> Bool {
        callouts += 1
        lastStart = position
        guard let clock, callouts % every == 0 else { return true }
        if clock.now() < deadline { return true }
        expired = true
        return false
    }

    /// This thread's state, created on first use and freed when the thread ends.
    static var current: UnsafeMutablePointer<MatchClock> {
        if let existing = pthread_getspecific(key) {
            return existing.assumingMemoryBound(to: MatchClock.self)
        }
        guard let context = pcre2_match_context_create_8(nil) else { fatalError("out of memory for a PCRE2 match context") }
        pcre2_set_callout_8(context, callout, nil)
        let state = UnsafeMutablePointer<MatchClock>.allocate(capacity: 1)
        state.initialize(to: MatchClock(context: context))
        pthread_setspecific(key, state)
        return state
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { state in
            guard let state else { return }
            let typed = state.assumingMemoryBound(to: MatchClock.self)
            pcre2_match_context_free_8(typed.pointee.context)
            typed.deinitialize(count: 1)
            typed.deallocate()
        }
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()

    /// The callout every pattern gets at its start (and PCRE2 also calls for the pattern's own
    /// callouts): 0 lets the match go on, a negative value ends it with that error.
    static let callout: @convention(c) (UnsafeMutablePointer<pcre2_callout_block_8>?, UnsafeMutableRawPointer?) -> Int32 = { block, _ in
        let position = block.map { Int($0.pointee.start_match) } ?? 0
        return current.pointee.mayContinue(at: position) ? 0 : PCRE2_ERROR_CALLOUT
    }
}
