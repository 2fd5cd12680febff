internal import CSQLite
import Foundation
import Synchronization
import UsherStore

/// Checkpoints of a WAL file off the writer's commit path: a thread with a connection of its own
/// that copies the WAL back into the database file while the writer goes on committing.
///
/// The writer connection gets `wal_autocheckpoint = 0` and a `sqlite3_wal_hook`, which SQLite
/// calls after each commit with the WAL's size in frames (pages):
///
/// - at `pages` or more it wakes the thread (an atomic flag; a semaphore only when it was down),
///   which runs `PRAGMA wal_checkpoint(PASSIVE)`: it copies the frames committed so far into the
///   file, with its two fsyncs, never blocking the writer or any reader.
/// - SQLite starts the WAL over from its beginning only when a write transaction begins with every
///   frame copied. A writer that never pauses keeps appending while the thread copies, so the
///   thread alone never gets there and the WAL would grow without end (and every page read
///   searches a longer WAL index). So once the thread has copied at least half of the WAL (or the
///   WAL is twice `pages` long), the writer's next commit copies the rest itself (a PASSIVE
///   checkpoint in the hook, as SQLite's automatic checkpoint does, but of the last frames only;
///   skipped while the thread is checkpointing) and its next transaction starts the WAL over: it
///   stays about `pages` long, and the writer does a fraction of the copying.
/// - at `hardLimit` (4 × `pages`) or more — the thread is slow, or readers pin old frames — the
///   writer waits (up to a second) for a running checkpoint to end and checkpoints after every
///   commit, as SQLite would; and the thread, finding the WAL that long with frames it could not
///   copy, runs a RESTART checkpoint: it waits (the busy timeout) for readers to move to the
///   newest snapshot, holding new writers back meanwhile, so the WAL cannot grow while readers
///   pin it.
///
/// With several processes on one file each has its own checkpointer: checkpoints take SQLite's
/// checkpoint lock, and one that finds it taken (`SQLITE_BUSY`) is skipped — the other is doing
/// the work. The thread's connection runs with the writer's `synchronous`, which decides the
/// fsyncs of a checkpoint (the WAL before copying, the file after), so durability is the same as
/// with SQLite's own checkpoints. `stop` lets a running checkpoint finish, ends the thread and
/// closes its connection.
@_spi(Bench) public final class WALCheckpointer: @unchecked Sendable {
    // @unchecked: `connection` is used only on the checkpointer's thread (and closed there);
    // everything shared is atomic or behind `state`.

    /// The WAL size, in frames, at which the thread checkpoints.
    public let pages: Int
    /// The WAL size at which the writer checkpoints itself and the thread runs a RESTART checkpoint.
    public var hardLimit: Int { pages * 4 }
    public let path: String

    /// What it has done so far.
    public struct Statistics: Sendable, Hashable {
        /// PASSIVE checkpoints run by the thread (including those skipped as busy).
        public var checkpoints = 0
        /// … of which found another connection checkpointing (`SQLITE_BUSY`).
        public var busy = 0
        /// RESTART checkpoints run by the thread because the WAL reached `hardLimit`.
        public var restarts = 0
        /// Checkpoints the writer ran itself: copying the frames the thread had not (most), or at
        /// `hardLimit`.
        public var writerCheckpoints = 0
        /// The largest WAL size a commit reported, in frames.
        public var largestWAL = 0
    }

    private let connection: SQLiteConnection
    /// The connection's settings, made again when it is reopened.
    private let configure: @Sendable (SQLiteConnection) throws -> Void
    private let requested = Atomic<Bool>(false)
    /// The WAL frames the thread's last checkpoint copied (0 after the writer's own).
    private let copiedTo = Atomic<Int>(0)
    /// The WAL's length after the writer's last commit.
    private let walFrames = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let largest = Atomic<Int>(0)
    private let writerRuns = Atomic<Int>(0)
    private let counts = Locked(Statistics())
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let onExit = Locked<[@Sendable () -> Void]>([])
    private let finished = Atomic<Bool>(false)

    /// Opens a connection to `path` (a file already in WAL mode) and starts the thread.
    /// `synchronous` is the writer's (`NORMAL` or `FULL`).
    public init(path: String, synchronous: String, pages: Int, busyTimeoutMilliseconds: Int = 1000) throws {
        precondition(pages > 0, "a checkpointer needs a threshold above zero")
        self.path = path
        self.pages = pages
        let connection = try SQLiteConnection(path: path)
        configure = { db in
            try db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
            try db.execute("PRAGMA synchronous = \(synchronous)")
        }
        do {
            try configure(connection)
        } catch {
            connection.close()
            throw error
        }
        self.connection = connection
        startThread(named: "usher-wal-ckpt") { [self] in loop() }
    }

    /// Whether the thread has ended (after `stop`) and closed its connection.
    public var isStopped: Bool { finished.load(ordering: .acquiring) }

    public var statistics: Statistics {
        var s = counts.withLock { $0 }
        s.largestWAL = largest.load(ordering: .relaxed)
        s.writerCheckpoints = writerRuns.load(ordering: .relaxed)
        return s
    }

    // MARK: the writer side

    /// Turns off the automatic checkpoints of `writer` (a handle in WAL mode on the same file) and
    /// installs the hook that wakes this checkpointer. Call on the writer's thread, after any
    /// `PRAGMA wal_autocheckpoint` (which would replace the hook). Returns the context to hand to
    /// `detach` when the writer closes (it keeps the checkpointer alive until then).
    public func attach(writer: OpaquePointer) -> UnsafeMutableRawPointer {
        sqlite3_wal_autocheckpoint(writer, 0)
        let context = Unmanaged.passRetained(self).toOpaque()
        sqlite3_wal_hook(writer, walHook, context)
        return context
    }

    /// Removes the hook from `writer` and releases what `attach` returned.
    public static func detach(writer: OpaquePointer, context: UnsafeMutableRawPointer) {
        sqlite3_wal_hook(writer, nil, nil)
        Unmanaged<WALCheckpointer>.fromOpaque(context).release()
    }

    /// Called by the hook after each commit of the writer, on its thread.
    fileprivate func committed(frames: Int, writer: OpaquePointer?, schema: UnsafePointer<CChar>?) {
        if frames > largest.load(ordering: .relaxed) { largest.store(frames, ordering: .relaxed) }
        walFrames.store(frames, ordering: .relaxed)
        guard frames >= pages else { return }
        if Self.writersTurn(copied: copiedTo.load(ordering: .acquiring), frames: frames) || frames >= 2 * pages {
            // At the hard limit, wait for a checkpoint running elsewhere (this thread's, another
            // process's) to end rather than let the WAL grow: up to a second, as busy_timeout.
            var waited = 0
            while true {
                var log: Int32 = 0, done: Int32 = 0
                let rc = sqlite3_wal_checkpoint_v2(writer, schema, SQLITE_CHECKPOINT_PASSIVE, &log, &done)
                if rc == SQLITE_OK {
                    writerRuns.add(1, ordering: .relaxed)
                    copiedTo.store(0, ordering: .releasing)
                    if done == log { return }   // all copied: the next transaction starts the WAL over
                    break
                }
                guard rc & 0xff == SQLITE_BUSY, frames >= hardLimit, waited < 5_000 else { break }
                usleep(200)
                waited += 1
            }
            // Busy below the hard limit: the thread is checkpointing; the next commit tries again.
        }
        if !requested.exchange(true, ordering: .acquiringAndReleasing) { wake.signal() }
    }

    /// Whether the thread has copied enough of a WAL of `frames` for the writer to copy the rest
    /// (at least half). `copied` above `frames` is from before the WAL started over: stale.
    private static func writersTurn(copied: Int, frames: Int) -> Bool {
        copied > 0 && copied <= frames && copied * 2 >= frames
    }

    // MARK: the thread

    /// Ends the thread after the checkpoint it may be running, closes its connection, then calls
    /// `done` (on the checkpointer's thread, or at once when already stopped).
    public func stop(then done: @escaping @Sendable () -> Void) {
        let now = onExit.withLock { waiting -> Bool in
            if finished.load(ordering: .acquiring) { return true }
            waiting.append(done)
            return false
        }
        if now { done(); return }
        if !stopping.exchange(true, ordering: .acquiringAndReleasing) { wake.signal() }
    }

    /// `stop`, waiting for the thread to end.
    public func stopAndWait() {
        let ended = DispatchSemaphore(value: 0)
        stop { ended.signal() }
        ended.wait()
    }

    /// `stop`, awaiting the thread's end without blocking the caller's thread.
    public func stop() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in stop { c.resume() } }
    }

    private func loop() {
        while true {
            wake.wait()
            if stopping.load(ordering: .acquiring) { break }
            requested.store(false, ordering: .releasing)
            // Once the writer is to copy the rest, another checkpoint here would only hold the
            // checkpoint lock against it.
            if Self.writersTurn(copied: copiedTo.load(ordering: .acquiring), frames: walFrames.load(ordering: .relaxed)) {
                continue
            }
            checkpoint()
        }
        connection.close()
        let waiting = onExit.withLock { waiting -> [@Sendable () -> Void] in
            finished.store(true, ordering: .releasing)
            defer { waiting = [] }
            return waiting
        }
        for done in waiting { done() }
    }

    private func checkpoint() {
        guard let db = connection.rawHandle else { return }
        var log: Int32 = 0, copied: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        var restart = false
        if rc == SQLITE_OK { copiedTo.store(Int(copied), ordering: .releasing) }
        if rc & 0xff == SQLITE_READONLY {
            // Opened while the file was not writable: the handle stays read-only until it is
            // opened again (the writer's does the same, `SQLiteStore.perform`).
            try? connection.reopen(configure: configure)
            return
        }
        counts.withLock {
            $0.checkpoints += 1
            if rc & 0xff == SQLITE_BUSY { $0.busy += 1 }
            restart = rc == SQLITE_OK && Int(log) >= hardLimit && copied < log
            if restart { $0.restarts += 1 }
        }
        if restart {
            // Readers pin frames the WAL cannot drop: wait for them, holding new writers back.
            sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_RESTART, nil, nil)
        }
    }
}

/// SQLite's WAL hook: (context, writer, schema name, frames in the WAL after this commit).
private let walHook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
    context, writer, schema, frames in
    if let context {
        Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
            .committed(frames: Int(frames), writer: writer, schema: schema)
    }
    return SQLITE_OK
}
