public import Foundation

extension SQLiteStore {
    /// How the store opens and uses its database file.
    public struct Options: Sendable {
        /// SQLite's `synchronous` setting in WAL mode.
        public enum Synchronous: String, Sendable, Hashable, CaseIterable {
            /// Commits are durable once the WAL is synced at a checkpoint: a power cut may lose
            /// the last transactions, never corrupt the file (an application crash loses nothing).
            case normal = "NORMAL"
            /// Every commit syncs the WAL: durable against power loss, slower.
            case full = "FULL"
        }

        public var synchronous: Synchronous
        /// How long SQLite itself waits for another connection's lock before reporting busy.
        public var busyTimeout: Duration
        /// Further attempts, with exponential backoff, after SQLite reports busy; then the call
        /// fails with a transient `StoreError` (code `busy`).
        public var busyRetries: Int
        /// The first backoff between such attempts (doubled each time, up to one second).
        public var retryBackoff: Duration
        /// `waitForChanges` polls `PRAGMA data_version` at this interval while messages flow…
        public var pollInterval: Duration
        /// …and backs off to this one after `activeWindow` without a change.
        public var idlePollInterval: Duration
        public var activeWindow: Duration
        /// SQLite's page cache per connection, in KiB.
        public var cacheKiB: Int
        /// The WAL size, in pages, at which the store's checkpointer thread copies the WAL back
        /// into the file, off the commit path (`WALCheckpointer`; at 4 × this the writer
        /// checkpoints itself). 0: SQLite's automatic checkpoints on the writer connection, at
        /// its default of 1,000 pages, inside the commit that reaches them.
        public var checkpointPages: Int
        /// The time written on leases, handoffs and rows (injected, like every clock here).
        public var clock: @Sendable () -> Date
        /// A second connection, on a thread of its own, for the worker's reads of a batch
        /// (`pending`, `states`): they run beside the writes instead of waiting behind them on
        /// the one writer connection (WAL lets readers run during a write). Not for `:memory:`.
        public var readerConnection = true

        public init(synchronous: Synchronous = .normal, busyTimeout: Duration = .seconds(1), busyRetries: Int = 8,
                    retryBackoff: Duration = .milliseconds(5), pollInterval: Duration = .milliseconds(2),
                    idlePollInterval: Duration = .milliseconds(20), activeWindow: Duration = .seconds(1),
                    cacheKiB: Int = 16_384, checkpointPages: Int = 4_000, clock: @escaping @Sendable () -> Date = { Date() }) {
            self.synchronous = synchronous
            self.busyTimeout = busyTimeout
            self.busyRetries = busyRetries
            self.retryBackoff = retryBackoff
            self.pollInterval = pollInterval
            self.idlePollInterval = idlePollInterval
            self.activeWindow = activeWindow
            self.cacheKiB = cacheKiB
            self.checkpointPages = checkpointPages
            self.clock = clock
        }
    }

    /// Counters since the store was opened.
    public struct Statistics: Sendable, Hashable {
        /// Calls retried after SQLite reported busy (each retry counts).
        public var busyRetries = 0
        /// Inbound messages committed (`.committed` results).
        public var commits = 0
        /// `PRAGMA data_version` polls made by `waitForChanges`.
        public var polls = 0
        /// WAL checkpoints run off the commit path (by the checkpointer thread, or by the writer
        /// at its hard limit); 0 with `checkpointPages` 0.
        public var checkpoints = 0
        /// The largest WAL a commit of this store left, in pages (0 with `checkpointPages` 0).
        public var largestWAL = 0
        /// Migrations applied when the store was opened.
        public var migrationsApplied: [Int] = []
    }
}

extension Duration {
    var milliseconds: Double {
        let c = components
        return Double(c.seconds) * 1000 + Double(c.attoseconds) / 1e15
    }
}
