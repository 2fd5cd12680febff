import UsherStore

/// Whether the worker's store calls go through: what `/healthz` and `/readyz` say, and when the
/// log says that the store fails or works again. A value with no I/O and no clock: `Worker`'s
/// `retrying` tells it what each call did, with the time, and logs the change it returns — so a
/// store that fails for minutes gives one line when it starts failing (and one per new error
/// code), one when every failing call went through again, and none per retry.
///
/// The policy (docs/operations.md): a transient `StoreError` (a lock, a full disk, a file made
/// read-only, a lost connection) is retried with backoff while the endpoints say 503; any other
/// error is `failedForGood`: the worker stops and `usher run` exits 1.
public struct StoreHealth: Sendable, Equatable {
    /// A store call that failed: which bot's, what it did, and the error.
    public struct Failure: Sendable, Equatable {
        public var bot: String
        public var operation: String
        public var code: String
        public var message: String

        public init(bot: String, operation: String, code: String, message: String) {
            self.bot = bot
            self.operation = operation
            self.code = code
            self.message = message
        }

        /// `error` as a failure of `operation` (a `StoreError`'s code and message; `unknown` and
        /// the description for anything else).
        public init(bot: String, operation: String, error: any Error) {
            let store = error as? StoreError
            self.init(bot: bot, operation: operation, code: store?.code ?? "unknown", message: store?.message ?? "\(error)")
        }
    }

    /// What a call's outcome changed, for the log.
    public enum Change: Sendable, Equatable {
        /// The first failure after the store worked, or an error code not seen yet while it fails.
        case failing(Failure)
        /// Every failing call went through: the first failed `after` ago; `failures` in all.
        case recovered(after: Duration, failures: Int)
    }

    /// What the endpoints report.
    public enum Status: Sendable, Equatable {
        case working
        /// Calls are being retried; `latest` is the last failure, the first came at `since`.
        case failing(latest: Failure, since: Duration)
        /// A failure retrying cannot mend: the worker is stopping, and exits non-zero.
        case failed(Failure)
    }

    /// The calls failing now, by the id `begin()` gave them.
    private var failing: [Int: Failure] = [:]
    private var latest: Failure?
    private var since: Duration?
    private var failures = 0
    /// The error codes said since the store last worked.
    private var said: Set<String> = []
    private var lastCall = 0
    /// The first failure retrying cannot mend.
    public private(set) var fatal: Failure?

    public init() {}

    /// An id for a call that failed for the first time (and will be retried).
    public mutating func begin() -> Int {
        lastCall += 1
        return lastCall
    }

    /// Call `call` failed with `failure` at `now`, and will be retried.
    public mutating func failed(_ call: Int, _ failure: Failure, now: Duration) -> Change? {
        failing[call] = failure
        latest = failure
        failures += 1
        if since == nil { since = now }
        return said.insert(failure.code).inserted ? .failing(failure) : nil
    }

    /// Call `call`, which had failed, ended: it went through (`succeeded`), or it gave up (a
    /// stop, a cancellation) and says nothing about the store.
    public mutating func ended(_ call: Int, succeeded: Bool, now: Duration) -> Change? {
        guard failing.removeValue(forKey: call) != nil, failing.isEmpty, let since else { return nil }
        let change = Change.recovered(after: now - since, failures: failures)
        self.since = nil
        latest = nil
        failures = 0
        said = []
        return succeeded ? change : nil
    }

    /// A failure retrying cannot mend (the first one is kept).
    public mutating func failedForGood(_ failure: Failure) {
        if fatal == nil { fatal = failure }
    }

    public var status: Status {
        if let fatal { return .failed(fatal) }
        if let latest, let since, !failing.isEmpty { return .failing(latest: latest, since: since) }
        return .working
    }
}
