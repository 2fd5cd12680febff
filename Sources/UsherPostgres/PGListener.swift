import Foundation
import Synchronization
import UsherJSON
import UsherStore

/// A connection that LISTENs on the store's channel and wakes waiters on every NOTIFY.
///
/// The notifications are taken on the store's reading thread (`ThreadExecutor.watch`), where
/// the worker's follow loop runs: a NOTIFY reaches the task waiting for it without a thread
/// switch. A thread of the listener's own makes the connection — and, when it drops, makes it
/// again with backoff, and once back wakes the waiters anyway: the worker then reads from its
/// cursor, so what was written meanwhile is found — and hands it to the reading thread.
///
/// Each NOTIFY names its message's seq (`PGSchema.trigger`): `notified(since:)` tells the worker
/// whether anything was signalled above what its last read covered.
///
/// A LISTEN connection can go deaf without breaking: its backend hung, or a connection pooler
/// that hands each transaction to another server connection. So once every `probeInterval`
/// the listener sends itself a NOTIFY on the store's other connection (`probe`); when the last
/// two of this connection have not come back (one may have failed to go, or the reading thread
/// been busy), the connection counts as not listening — the store polls, and the worker reads
/// without waiting for NOTIFYs — until a probe comes back again.
final class PGListener: Sendable {
    let signal = ChangeSignal()
    private let running = Atomic<Bool>(true)
    private let listening = Atomic<Bool>(false)
    /// The connection is up but its last two probes did not come back.
    private let deaf = Atomic<Bool>(false)
    /// Held by `wake`: one wake-up at a time.
    private let waking = Mutex(())
    /// Sends a NOTIFY with the payload given on the store's channel, from another connection,
    /// without waiting for it.
    private let probe: (@Sendable (String) -> Void)?
    private let probeInterval: Duration
    /// This listener's probes, numbered on across connections: the last one sent, the newest
    /// back, and the last one sent before the current connection listened.
    private let probeSent = Atomic<UInt64>(0), probeHeard = Atomic<UInt64>(0), probeBaseline = Atomic<UInt64>(0)
    /// What every probe's payload starts with, and then this listener's own.
    private static let probePrefix = "usher-probe:"
    private let probeName = PGListener.probePrefix + UUID().uuidString + ":"
    private let session: PGSession
    /// Where the notifications are taken (the store's reading thread).
    private let thread: ThreadExecutor
    /// Signalled by `thread` when it gives the connection back: it broke, or the store stops.
    private let handedBack = DispatchSemaphore(value: 0)
    /// Signalled by `stop`: cuts a backoff short.
    private let stopping = DispatchSemaphore(value: 0)
    /// Signalled once by the listener's thread as it ends, its connection closed.
    private let ended = DispatchSemaphore(value: 0)
    /// The socket `thread` watches (-1: none); only touched on `thread`.
    private let watched = Locked<Int32>(-1)
    /// The newest seq in the messages table when the connection started listening: every
    /// inbound message above it is notified, those at or below it may predate the LISTEN.
    private let complete = Atomic<Int64>(.max)
    /// The newest seq a NOTIFY named.
    private let newest = Atomic<Int64>(0)
    /// The generation of the last wake-up that did not say which messages it was for: a
    /// (re)connect, or a NOTIFY without a seq (a trigger of an older Usher, say).
    private let unknownAt = Atomic<UInt64>(0)
    private let latestSeq: String
    /// The messages NOTIFYs brought and no read has covered yet, by seq: `PostgresStore`'s
    /// claims take those of conversations its worker holds from here instead of reading them.
    /// At most `maxNotes`; past that they are dropped, and the wake-up counts as one that did not
    /// say what it was for.
    private let buffer = Mutex(Notes())
    let maxNotes: Int

    /// What one NOTIFY said.
    struct Note: Sendable {
        var seq: Int64
        /// Nil: the payload was the seq alone (a message too long for a NOTIFY).
        var message: StoredMessage?
        /// No inbound message of its conversation came before it (`PGSchema.first`).
        var first: Bool

        init(seq: Int64, message: StoredMessage?, first: Bool) {
            self.seq = seq
            self.message = message
            self.first = first
        }

        /// A payload as the trigger writes it (`PGSchema.trigger`): the message's
        /// `messageColumns` and whether it is its conversation's first, as a JSON array; else its
        /// seq alone (`message` nil). Nil when it is neither.
        init?(payload: String) {
            if let seq = Int64(payload) {
                self.init(seq: seq, message: nil, first: false)
                return
            }
            var values: [String?] = []
            var seq: Int64?, at: Double?, first = false
            var payload = payload
            payload.makeContiguousUTF8()
            let parsed: Bool = payload.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                var r = JSONReader(bytes)
                do {
                    try r.array { r in
                        switch values.count {
                        case 0: seq = Int64(try r.int())
                        case 8: if try !r.null() { at = try r.double() }
                        case 12: if try !r.null() { first = try r.int() == 1 }
                        default: if try !r.null() { values.append(try r.string()); return }
                        }
                        values.append(nil)
                    }
                    try r.end()
                    return true
                } catch {
                    return false
                }
            } ?? false
            guard parsed, let seq, values.count == 13 else { return nil }
            self.init(seq: seq, message: PostgresStore.message(seq: seq, at: at ?? 0) { values[$0] }, first: first)
        }
    }

    private struct Notes {
        /// By seq.
        var pending: [Int64: Note] = [:]
        /// The newest seq among the notes dropped when there were more than `maxNotes`: those
        /// messages are still to be read, so `newestNote` says at least this.
        var dropped: Int64?
        /// Seqs a read returned or a claim took, so that a NOTIFY of one that comes late is not
        /// taken for a new message (at most `maxNotes`, the oldest dropped first: a late NOTIFY
        /// then costs a commit that finds its message done).
        var taken: Set<Int64> = []
        /// Nothing at or below it is kept: a read covered it (a late NOTIFY of such a message
        /// is not noted), so a claim after it — every claim taken from the notes — costs no scan.
        var covered: Int64 = 0

        /// Drops what is at or below `seq`: a read from there covers it.
        mutating func prune(through seq: Int64) {
            guard seq > covered else { return }
            covered = seq
            pending = pending.filter { $0.key > seq }
            taken = taken.filter { $0 > seq }
            if let d = dropped, d <= seq { dropped = nil }
        }

        /// Keeps `note` unless a read covered it or a claim took it.
        mutating func add(_ note: Note) {
            if note.seq > covered, !taken.contains(note.seq) { pending[note.seq] = note }
        }
    }

    /// `latestSeq`: the statement that reads the newest seq (`PGSQL.latestSeq`); `maxNotes`: the
    /// most notes kept (tests make it small); `thread`: where the notifications are taken.
    init(_ conninfo: String, channel: String, latestSeq: String, maxNotes: Int = 10_000, on thread: ThreadExecutor,
         probe: (@Sendable (String) -> Void)? = nil, probeInterval: Duration = .seconds(15)) {
        self.maxNotes = maxNotes
        self.latestSeq = latestSeq
        self.thread = thread
        self.probe = probe
        self.probeInterval = probeInterval
        session = PGSession(conninfo, label: "usher.postgres.listen", thread: false) { db throws(StoreError) in
            try db.script("LISTEN \(PGText.identifier(channel))")
        }
        startThread(named: "usher-pg-listen") { [self] in loop() }
    }

    /// Whether the LISTEN connection is up and hears its probes (else callers poll).
    var isListening: Bool { listening.load(ordering: .relaxed) && !deaf.load(ordering: .relaxed) }

    var generation: UInt64 { signal.generation }

    /// What the NOTIFYs say (`SignallingStore.notified(since:)`), or nil when a wake-up since
    /// `generation` did not say which messages it was for.
    func notified(since generation: UInt64) -> Notified? {
        if unknownAt.load(ordering: .acquiring) > generation { return nil }
        return Notified(complete: complete.load(ordering: .acquiring), newest: newest.load(ordering: .acquiring))
    }

    /// Wakes the waiters. Only the listener notifies `signal`, one wake-up at a time (the reading
    /// thread with NOTIFYs, the listener's thread at a connect and when a probe finds the
    /// connection deaf or hearing again), so the generation a wake-up makes is the current one
    /// plus one. `seqs`: the messages it is for, as far as known; `all`: whether that is all of
    /// them (else the wake-up counts as one that did not say what it was for).
    private func wake(_ seqs: [Int64], all: Bool) {
        waking.withLock { _ in
            if let m = seqs.max(), m > newest.load(ordering: .relaxed) { newest.store(m, ordering: .releasing) }
            if !all { unknownAt.store(signal.generation &+ 1, ordering: .releasing) }
            signal.notify()
        }
    }

    /// The messages notified above `seq` and not taken, in seq order (nil message: only its seq
    /// was said); those at or below it are dropped (a read from there covers them).
    func notes(after seq: Int64) -> [Note] {
        buffer.withLock { b in
            b.prune(through: seq)
            return b.pending.values.sorted { $0.seq < $1.seq }
        }
    }

    /// The newest seq in the messages table when the connection started listening
    /// (`Notified.complete`).
    var completeSeq: Int64 { complete.load(ordering: .acquiring) }

    /// The newest seq notified that no read returned and no claim took (nil: none).
    var newestNote: Int64? {
        buffer.withLock { b in [b.pending.keys.max(), b.dropped].compactMap { $0 }.max() }
    }

    /// Marks the messages a read returned or a claim took; a read also drops the notes at or
    /// below what it covered (`through`: `Intake.readThrough`).
    func forget(_ seqs: some Sequence<Int64>, through: Int64 = 0) {
        buffer.withLock { b in
            b.prune(through: through)
            for s in seqs {
                b.pending.removeValue(forKey: s)
                b.taken.insert(s)
            }
            if b.taken.count > maxNotes { b.taken = Set(b.taken.sorted().suffix(maxNotes / 2)) }
        }
    }

    /// Stops listening: the reading thread gives the connection back, and the listener's
    /// thread closes it.
    func stop() {
        running.store(false, ordering: .relaxed)
        stopping.signal()
        if !thread.submit({ [self] in
            let fd = watched.withLock { fd in defer { fd = -1 }; return fd }
            guard fd >= 0 else { return }
            thread.unwatch(fd)
            handedBack.signal()
        }) { handedBack.signal() }
    }

    /// Returns once the listener's thread has ended (after `stop`): its connection closed, and
    /// nothing of it left inside libpq or OpenSSL. A process that exits before that races its
    /// thread against `exit`'s clean-up of OpenSSL, and can crash (seen with SCRAM logins and
    /// TLS, when a short command ended while the listener was still connecting). A connect in
    /// progress can hold it for the connect timeout (10 s by default); past `limit` it returns
    /// all the same, so a stop is never held for good.
    func waitUntilEnded(limit: Duration = .seconds(15)) async {
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { [ended] in
                if ended.wait(timeout: .now() + limit.seconds) == .success { ended.signal() }   // for any other waiter
                k.resume()
            }
        }
    }

    /// The listener's thread: connects (LISTEN), notes where the notifications start, wakes the
    /// waiters, and hands the connection to the reading thread until it comes back — broken,
    /// or at the stop; then again, with backoff while the server is away.
    private func loop() {
        var backoff = 0.05
        while running.load(ordering: .relaxed) {
            do {
                try session.runHere { db in
                    // (Re)connected: what was written before the LISTEN is not notified.
                    complete.store(try db.execute(latestSeq, prepare: true).int64(0, 0), ordering: .releasing)
                }
                backoff = 0.05
                probeBaseline.store(probeSent.load(ordering: .relaxed), ordering: .relaxed)
                deaf.store(false, ordering: .relaxed)
                listening.store(true, ordering: .relaxed)
                wake([], all: false)   // look again from the cursor
                if !thread.submit({ [self] in take() }) { break }
                while handedBack.wait(timeout: .now() + probeInterval.seconds) == .timedOut { checkAndProbe() }
            } catch {
                listening.store(false, ordering: .relaxed)
                _ = stopping.wait(timeout: .now() + backoff)
                backoff = min(backoff * 2, 2)
            }
        }
        listening.store(false, ordering: .relaxed)
        session.closeHere()
        ended.signal()
    }

    /// On the listener's thread, once every `probeInterval` while the reading thread holds the
    /// connection: deaf when the last two probes of this connection have not come back, hearing
    /// again when the last one has (waking the waiters at each change: they poll, or wait for
    /// NOTIFYs again, and read from the cursor); then the next probe.
    private func checkAndProbe() {
        guard let probe, running.load(ordering: .relaxed) else { return }
        let sent = probeSent.load(ordering: .acquiring), heard = probeHeard.load(ordering: .acquiring)
        if deaf.load(ordering: .relaxed) {
            if heard >= sent {
                deaf.store(false, ordering: .releasing)
                wake([], all: false)
            }
        } else if sent >= probeBaseline.load(ordering: .relaxed) + 2, heard + 1 < sent {
            deaf.store(true, ordering: .releasing)
            wake([], all: false)
        }
        probeSent.store(sent + 1, ordering: .releasing)
        probe(probeName + String(sent + 1))
    }

    /// Takes this listener's probes out of `notified` (noting the newest heard) and every other
    /// listener's.
    private func withoutProbes(_ notified: [(channel: String, payload: String)]) -> [(channel: String, payload: String)] {
        notified.filter { n in
            guard n.payload.hasPrefix(Self.probePrefix) else { return true }
            if n.payload.hasPrefix(probeName), let k = UInt64(n.payload.dropFirst(probeName.count)),
               k > probeHeard.load(ordering: .relaxed) {
                probeHeard.store(k, ordering: .releasing)
            }
            return false
        }
    }

    /// On the reading thread: takes the notifications that came, and watches the socket for
    /// the next; gives the connection back when it broke or the store stops.
    private func take() {
        guard running.load(ordering: .relaxed) else {
            // Nothing watched any more: a `stop` closure queued behind this one must not
            // unwatch the number, which a commit connection made meanwhile may have by then.
            watched.withLock { $0 = -1 }
            handedBack.signal()
            return
        }
        do {
            // Never connecting here: a new connection is the listener's thread's to make (and
            // to announce, `loop`).
            let (received, fd) = try session.runHere(connect: false) { db in (try db.notifications(wait: 0), db.socket) }
            let notified = withoutProbes(received)
            if fd < 0 { throw PGSession.closedError }
            if !notified.isEmpty {
                let notes = notified.compactMap { Note(payload: $0.payload) }
                let kept = buffer.withLock { b -> Bool in
                    for n in notes { b.add(n) }
                    if b.pending.count <= maxNotes { return true }
                    b.dropped = [b.dropped, b.pending.keys.max()].compactMap { $0 }.max()
                    b.pending.removeAll()
                    return false
                }
                wake(notes.map(\.seq), all: notes.count == notified.count && kept)
            }
            watched.withLock { $0 = fd }
            thread.watch(fd) { [self] in take() }
        } catch {
            listening.store(false, ordering: .relaxed)
            watched.withLock { $0 = -1 }
            handedBack.signal()
        }
    }
}
